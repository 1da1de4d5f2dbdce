import Synchronization

/// The in-memory count of accepted requests per device token behind `dispatch.tooManyRequests`
/// (SEMANTICS section 12.3): a request is refused when at least `limit` requests to its token were
/// already accepted in `(now − window, now]`. Only accepted requests are counted; the counts are
/// not persisted, so a restart refills them (section 11.2).
package final class RequestRateWindow: Sendable {
    /// The limit and the window.
    package let limit: RequestRateLimit
    /// The window in milliseconds.
    private let windowMilliseconds: Int64

    /// Where a request record lies (its partition and offset in the requests topic; offline,
    /// partition 0 and the line's number): what makes counting it idempotent.
    package struct RecordPosition: Sendable, Hashable {
        package var partition: Int32
        package var offset: Int64

        package init(partition: Int32, offset: Int64) {
            self.partition = partition
            self.offset = offset
        }
    }

    /// One accepted request: when, and which record it was.
    private struct Acceptance {
        var time: Int64
        var record: RecordPosition
    }

    /// Acceptances by normalised token, oldest first, and how many were added since the last
    /// sweep of tokens gone quiet.
    private struct State {
        var accepted: [String: [Acceptance]] = [:]
        var addedSinceSweep = 0
    }

    private let state = Mutex(State())

    /// A window for `limit`.
    package init(_ limit: RequestRateLimit) {
        self.limit = limit
        let (seconds, attoseconds) = limit.window.components
        windowMilliseconds = seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// Counts the request `record` to `deviceToken` at `now` (milliseconds since the epoch) as
    /// accepted, unless `limit` requests were already accepted in the window: then it is not
    /// counted. A record counted already (decided again: its output was refused and it is
    /// written again) is accepted again without a second count.
    /// - Returns: how many requests were in the window before this one when it was refused, nil
    ///   when it was accepted.
    package func admit(_ deviceToken: String, now: Int64, record: RecordPosition) -> Int? {
        state.withLock { state in
            let since = now - windowMilliseconds
            var times = state.accepted[deviceToken] ?? []
            // Times at or before the window's start no longer count; offline, lines may go back in
            // time, so only those are dropped (a later line's earlier `now` may still count the rest).
            times.removeAll { $0.time <= since }
            if times.contains(where: { $0.record == record }) {
                state.accepted[deviceToken] = times
                return nil
            }
            let inWindow = times.reduce(0) { $1.time <= now ? $0 + 1 : $0 }
            if inWindow >= limit.limit {
                state.accepted[deviceToken] = times
                return inWindow
            }
            times.append(Acceptance(time: now, record: record))
            state.accepted[deviceToken] = times
            state.addedSinceSweep += 1
            if state.addedSinceSweep > max(1_024, state.accepted.count) { Self.sweep(&state, before: since) }
            return nil
        }
    }

    /// Forgets tokens with no time left in the window, so quiet tokens do not hold memory.
    private static func sweep(_ state: inout State, before since: Int64) {
        state.addedSinceSweep = 0
        state.accepted = state.accepted.filter { $0.value.contains { $0.time > since } }
    }
}
