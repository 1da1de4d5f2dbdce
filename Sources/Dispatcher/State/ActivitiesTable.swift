package import Records
import Synchronization

/// The activities table of SEMANTICS section 11.2: Live Activities by activity token, kept current
/// from the compacted activities topic (a null value deletes the entry, a new value replaces the
/// old one whole) and changed by the rules of section 14, whose activities records restore exactly
/// what they changed. It also answers which activities a broadcast channel reaches (section 15)
/// and which dismissed activity to drop when the table is full (`dispatch.stateLimits.activities`).
///
/// - Important: the rules read and change it while preparing a record; records of one partition
///   are prepared in order, so each sees the changes of those before it. Reads and changes may come
///   from any thread.
package final class ActivitiesTable: Sendable {
    /// What one activities record did to the table.
    package enum Update: Sendable, Hashable {
        /// The token's entry was set.
        case set(activityToken: String, entry: ActivityEntry)
        /// The token's entry was removed (a null value).
        case deleted(activityToken: String)
        /// The record was ignored; the reason is for the log (never contains the key or value).
        case invalid(reason: String)
    }

    /// A channel of one app.
    private struct Channel: Hashable {
        var bundleID: String
        var channelID: String
    }

    /// The entries, the channel index, the dismissal queue and the counters.
    private struct State {
        var entries: [String: ActivityEntry] = [:]
        var subscribers: [Channel: Set<String>] = [:]
        var dismissals = DismissalQueue()
        var evicted = 0
        var refused = 0

        mutating func set(_ token: String, _ entry: ActivityEntry) {
            if let old = entries.updateValue(entry, forKey: token), let channel = old.channelID {
                subscribers[Channel(bundleID: old.bundleID, channelID: channel)]?.remove(token)
            }
            if let channel = entry.channelID {
                subscribers[Channel(bundleID: entry.bundleID, channelID: channel), default: []].insert(token)
            }
            if entry.status == .ended, let date = entry.dismissalDate {
                dismissals.insert(token, date: date)
                // Queued tokens are checked when read, so the queue may hold stale ones: rebuilt
                // when they outnumber the entries, which keeps its memory bounded by the table's.
                if dismissals.count > 2 * entries.count + 1_024 { rebuildDismissals() }
            }
        }

        mutating func rebuildDismissals() {
            dismissals.removeAll()
            for (token, entry) in entries where entry.status == .ended {
                if let date = entry.dismissalDate { dismissals.insert(token, date: date) }
            }
        }

        mutating func remove(_ token: String) {
            guard let old = entries.removeValue(forKey: token) else { return }
            if let channel = old.channelID {
                let key = Channel(bundleID: old.bundleID, channelID: channel)
                subscribers[key]?.remove(token)
                if subscribers[key]?.isEmpty == true { subscribers[key] = nil }
            }
            if entries.isEmpty { dismissals.removeAll() }
        }
    }

    private let state = Mutex(State())
    /// The most entries the table may have (`dispatch.stateLimits.activities`).
    package let limit: Int

    /// An empty table of at most `limit` entries.
    package init(limit: Int = StateLimits.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// The number of entries.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every entry (the counters of evictions and refusals go on): a worker does this
    /// when its partitions are reassigned, before it restores those it then owns from their
    /// changelogs (docs/worker.md, "Partitioned state").
    package func removeAll() {
        state.withLock { state in
            let (evicted, refused) = (state.evicted, state.refused)
            state = State()
            (state.evicted, state.refused) = (evicted, refused)
        }
    }

    /// The count, the limit and the counters, for metrics.
    package var usage: StateUsage {
        state.withLock { StateUsage(count: $0.entries.count, limit: limit, evicted: $0.evicted, refused: $0.refused) }
    }

    /// The entry of `activityToken` (normalised lowercase hex), nil when unknown.
    package func entry(forActivityToken activityToken: String) -> ActivityEntry? {
        state.withLock { $0.entries.isEmpty ? nil : $0.entries[activityToken] }
    }

    /// Every entry, by token (tests and tools).
    package var entries: [String: ActivityEntry] { state.withLock { $0.entries } }

    /// The tokens of the activities subscribed to `channelID` of `bundleID`, in ascending order
    /// (section 15's fan-out).
    package func subscribers(ofChannel channelID: String, bundleID: String) -> [String] {
        state.withLock { $0.subscribers[Channel(bundleID: bundleID, channelID: channelID)].map { $0.sorted() } ?? [] }
    }

    /// Applies one record of the activities topic.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        guard let key, let token = AppStatesTable.normalisedToken(key) else {
            return .invalid(reason: "the key is not an activity token (64 to 200 hexadecimal characters, even length)")
        }
        guard let value else {
            state.withLock { $0.remove(token) }
            return .deleted(activityToken: token)
        }
        do throws(StateRecordError) {
            let entry = try ActivityEntry(parsing: value)
            state.withLock { $0.set(token, entry) }
            return .set(activityToken: token, entry: entry)
        } catch {
            return .invalid(reason: error.message)
        }
    }

    /// Sets `activityToken`'s entry (the rules, section 14.3).
    func set(_ activityToken: String, _ entry: ActivityEntry) {
        state.withLock { $0.set(activityToken, entry) }
    }

    /// What making room for a new activity at `now` (UNIX seconds) came to.
    enum Room {
        /// There was room: nothing dropped.
        case free
        /// The dismissed activity of this token (the earliest dismissal) was dropped to make room.
        case evicted(String)
        /// Full of activities that are not dismissed: the new one is refused.
        case full
    }

    /// Makes room for one new activity when the table is full: drops the dismissed activity with
    /// the earliest dismissal date, or counts a refusal when none is dismissed at `now`.
    func makeRoom(now: Int64) -> Room {
        state.withLock { state in
            guard state.entries.count >= limit else { return .free }
            while let (date, token) = state.dismissals.first, date <= now {
                state.dismissals.removeFirst()
                // A queued token whose activity changed since (or is gone) is skipped.
                guard let entry = state.entries[token], entry.status == .ended, entry.dismissalDate == date else { continue }
                state.remove(token)
                state.evicted += 1
                return .evicted(token)
            }
            state.refused += 1
            return .full
        }
    }
}
