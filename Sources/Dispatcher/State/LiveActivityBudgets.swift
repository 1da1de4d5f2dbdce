import Synchronization

/// The in-memory Live Activity budgets of SEMANTICS section 14.5: per activity token, the times of
/// the priority-10 pushes that were applied (`updated` or `ended`) in the rolling hour. Not
/// persisted: a restart refills them (section 11.2).
///
/// - Important: the rules read and count them while executing an ``ActivityCommand``, in order,
///   on the worker that owns the activity token's partition.
package final class LiveActivityBudgets: Sendable {
    /// The window: one hour, in milliseconds.
    package static let windowMilliseconds: Int64 = 3_600_000

    /// Counted times (milliseconds) by token, and how many were added since the last sweep.
    private struct State {
        var counted: [String: [Int64]] = [:]
        var addedSinceSweep = 0
    }

    private let state = Mutex(State())

    /// Empty budgets.
    package init() {}

    /// Forgets every entry: a worker does this when its partitions are reassigned, before it
    /// counts afresh for those it then owns (budgets are in memory only) (docs/worker.md, "Partitioned state").
    package func removeAll() {
        state.withLock { $0 = State() }
    }

    /// How many priority-10 pushes to `activityToken` were counted in `(now − 1 h, now]`
    /// (`now` in milliseconds).
    package func count(_ activityToken: String, now: Int64) -> Int {
        state.withLock { state in
            let since = now - Self.windowMilliseconds
            return state.counted[activityToken]?.reduce(0) { $1 > since && $1 <= now ? $0 + 1 : $0 } ?? 0
        }
    }

    /// Counts one applied priority-10 push to `activityToken` at `now` (milliseconds).
    package func record(_ activityToken: String, now: Int64) {
        state.withLock { state in
            let since = now - Self.windowMilliseconds
            var times = state.counted[activityToken] ?? []
            times.removeAll { $0 <= since }
            times.append(now)
            state.counted[activityToken] = times
            state.addedSinceSweep += 1
            if state.addedSinceSweep > max(1_024, state.counted.count) {
                state.addedSinceSweep = 0
                state.counted = state.counted.filter { $0.value.contains { $0 > since } }
            }
        }
    }
}
