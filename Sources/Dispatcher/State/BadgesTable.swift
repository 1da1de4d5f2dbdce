import JSON
package import Records
import Synchronization

/// The badge ledger of SEMANTICS section 21: per device and app (`<device token>/<bundle ID>`),
/// the badge count the device shows, kept current from the badges topic (a record from outside
/// replaces a count, a null value deletes it) and changed by the rules, whose badges records
/// restore exactly what they changed.
///
/// - Important: the rules read and change it while deciding a record of the token's partition,
///   in order. Reads and changes may come from any thread.
package final class BadgesTable: Sendable {
    /// One device's count: the badge it shows, and when the ledger last changed it.
    package struct Entry: Sendable, Hashable {
        /// `count`: the badge number, 0 or more.
        package var count: Int
        /// `updatedAt`: milliseconds since the epoch, when known.
        package var updatedAt: Int64?

        /// An entry of `count`, changed at `updatedAt`.
        package init(count: Int, updatedAt: Int64?) {
            self.count = count
            self.updatedAt = updatedAt
        }
    }

    /// What one badges record did to the table.
    package enum Update: Sendable, Equatable {
        /// The key's count was set.
        case set(key: String, entry: Entry)
        /// The key's count was removed (a null value).
        case deleted(key: String)
        /// One of the table's own changes came back from the topic (``applyConsumed(key:value:)``):
        /// the table holds it, or a later change of its own, already.
        case confirmed(key: String)
        /// A record from outside that a change of the table's own follows in the topic
        /// (``applyConsumed(key:value:)``): the topic's last word for the key is that change, so
        /// the record changes nothing.
        case superseded(key: String)
        /// The record was ignored; the reason is for the log.
        case invalid(reason: String)
    }

    /// The record that last changed a count, and the count before it: a record decided again
    /// (its output refused, or written again after a rewind of its partition's state, which
    /// forgets these) reads the count from before its first decision.
    private struct Decision {
        var record: RequestRateWindow.RecordPosition
        var before: Int
    }

    /// Counts by key, the decisions that set them, the changes not yet read back from the topic,
    /// and how many new keys were refused because the table was full.
    private struct State {
        var entries: [String: Entry] = [:]
        var decisions: [String: Decision] = [:]
        var unconfirmed: [String: [Entry]] = [:]
        var refused = 0
    }

    private let state = Mutex(State())
    /// The most counts the table may hold (`dispatch.stateLimits.badges`).
    package let limit: Int
    /// Whether the table's own changes come back to it as records of the badges topic, which it
    /// must tell from a provider's (the worker, which reads that topic while it writes it);
    /// offline, what the rules write is output only.
    private let readsItsOwnChanges: Bool
    /// The most changes of one key awaited from the topic: more are in flight only when the
    /// topic takes longer than usual to answer, or when a change was never written (its request
    /// ended as a dead letter); the oldest is then forgotten.
    static let unconfirmedLimit = 64

    /// An empty table of at most `limit` counts.
    /// - Parameter readsItsOwnChanges: whether its own changes come back as consumed records
    ///   (``applyConsumed(key:value:)``).
    package init(limit: Int = StateLimits.defaultLimit, readsItsOwnChanges: Bool = false) {
        self.limit = max(1, limit)
        self.readsItsOwnChanges = readsItsOwnChanges
    }

    /// The number of counts.
    package var count: Int { state.withLock { $0.entries.count } }

    /// The count, the limit and the refusals, for metrics.
    package var usage: StateUsage {
        state.withLock { StateUsage(count: $0.entries.count, limit: limit, evicted: 0, refused: $0.refused) }
    }

    /// Forgets every count (the refusals go on counting): a worker does this when its partitions
    /// are reassigned, before it restores those it then owns (docs/worker.md, "Partitioned state").
    package func removeAll() {
        state.withLock { state in
            let refused = state.refused
            state = State()
            state.refused = refused
        }
    }

    /// The table key of a token and an app.
    package static func key(deviceToken: String, bundleID: String) -> String { deviceToken + "/" + bundleID }

    /// The count for `key`, 0 when there is none.
    package func count(forKey key: String) -> Int {
        state.withLock { $0.entries[key]?.count ?? 0 }
    }

    /// The count for `key` as the record at `position` finds it: the count before that record's
    /// own change when it was the last to change it (it is decided again), else the count now.
    func count(forKey key: String, decidedBy position: RequestRateWindow.RecordPosition) -> Int {
        state.withLock { state in
            if let decision = state.decisions[key], decision.record == position { return decision.before }
            return state.entries[key]?.count ?? 0
        }
    }

    /// Sets `key`'s count as the record at `position` decided it, from `before` (the rules,
    /// section 21.3), unless it is a new key and the table is full: then nothing changes and a
    /// refusal is counted.
    /// - Returns: whether it was set.
    func set(
        _ key: String, to count: Int, updatedAt: Int64, decidedBy position: RequestRateWindow.RecordPosition, before: Int
    ) -> Bool {
        state.withLock { state in
            if state.entries[key] == nil, state.entries.count >= limit {
                state.refused += 1
                return false
            }
            let entry = Entry(count: count, updatedAt: updatedAt)
            state.entries[key] = entry
            state.decisions[key] = Decision(record: position, before: before)
            if readsItsOwnChanges {
                state.unconfirmed[key, default: []].append(entry)
                if state.unconfirmed[key, default: []].count > Self.unconfirmedLimit { state.unconfirmed[key]?.removeFirst() }
            }
            return true
        }
    }

    /// The entry for `key`, nil when there is none.
    package func entry(forKey key: String) -> Entry? {
        state.withLock { $0.entries[key] }
    }

    /// Sets `key`'s count from a record of the badges topic, unless it is a new key and the
    /// table is full.
    /// - Returns: whether it was set.
    private func set(_ key: String, to entry: Entry) -> Bool {
        state.withLock { state in
            if state.entries[key] == nil, state.entries.count >= limit {
                state.refused += 1
                return false
            }
            state.entries[key] = entry
            state.decisions[key] = nil
            return true
        }
    }

    /// Applies one record of the badges topic: `{"count": int ≥ 0, "updatedAt": int}` under
    /// `<device token>/<bundle ID>` (the token normalised to lowercase); a null value deletes.
    /// What a restore and the offline `dispatch` do: every record is the table's new word.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        switch Self.parse(key: key, value: value) {
        case .failure(let reason): .invalid(reason: reason.message)
        case .success((let key, let entry)): replace(key, with: entry)
        }
    }

    /// Applies a record of the badges topic read after the table was restored, while the worker
    /// writes that topic too (section 21.1: the dispatcher and providers both write it).
    ///
    /// The worker reads its own records back after it changed the table for them: such a record
    /// is confirmed and changes nothing (the table holds it, or a later change). A record from
    /// outside (a provider's reset) replaces the count, unless a change of the table's own is
    /// still awaited from the topic: that change was written after the record (the topic gives
    /// a partition's records in order, and this one came first), so it is the topic's last word
    /// for the key, and the table already holds it. Either way the table ends where a restore
    /// from the topic would.
    @discardableResult
    package func applyConsumed(key: RecordBytes?, value: RecordBytes?) -> Update {
        let parsed: (key: String, entry: Entry?)
        switch Self.parse(key: key, value: value) {
        case .failure(let reason): return .invalid(reason: reason.message)
        case .success(let record): parsed = record
        }
        let (key, entry) = parsed
        let awaited = state.withLock { state -> Update? in
            guard let changes = state.unconfirmed[key], !changes.isEmpty else { return nil }
            // Changes before the one that came back never reached the topic: forget them too.
            if let entry, let index = changes.firstIndex(of: entry) {
                state.unconfirmed[key] = index + 1 < changes.count ? Array(changes[(index + 1)...]) : nil
                return .confirmed(key: key)
            }
            return .superseded(key: key)
        }
        return awaited ?? replace(key, with: entry)
    }

    /// Sets (or, for nil, removes) `key`'s entry from a record of the badges topic, unless it is
    /// a new key and the table is full.
    private func replace(_ key: String, with entry: Entry?) -> Update {
        guard let entry else {
            state.withLock { state in
                state.entries[key] = nil
                state.decisions[key] = nil
            }
            return .deleted(key: key)
        }
        guard set(key, to: entry) else {
            return .invalid(reason: "the badges table is full (dispatch.stateLimits.badges: \(limit))")
        }
        return .set(key: key, entry: entry)
    }

    /// A badges record's normalised key and its entry (nil for a null value, a deletion).
    private static func parse(key: RecordBytes?, value: RecordBytes?) -> Result<(String, Entry?), StateRecordError> {
        guard let key, let text = String(validating: key, as: UTF8.self), let slash = text.firstIndex(of: "/"),
            let token = AppStatesTable.normalisedToken(text[..<slash].utf8), text.index(after: slash) < text.endIndex
        else {
            return .failure(StateRecordError("the key is not <device token>/<bundle ID>"))
        }
        let normalisedKey = Self.key(deviceToken: token, bundleID: String(text[text.index(after: slash)...]))
        guard let value else { return .success((normalisedKey, nil)) }
        return entry(parsing: value).map { (normalisedKey, $0) }
    }

    /// A badges record's value (section 21.3): `{"count":N,"updatedAt":ms}`.
    package static func value(count: Int, updatedAt: Int64) -> [UInt8] {
        var writer = JSONWriter(capacity: 48)
        write(count: count, updatedAt: updatedAt, to: &writer)
        return writer.finish()
    }

    /// Writes a badges record's value.
    static func write(count: Int, updatedAt: Int64, to writer: inout JSONWriter) {
        writer.append(#"{"count":"#)
        writer.write(integer: count)
        writer.append(#","updatedAt":"#)
        writer.write(integer: Int(updatedAt))
        writer.append("}")
    }

    /// The entry a badges record's value holds.
    static func entry(parsing value: RecordBytes) -> Result<Entry, StateRecordError> {
        guard case .object(let object)? = try? JSONValue(parsing: value.array) else {
            return .failure(StateRecordError("the value is not a JSON object"))
        }
        guard case .number(let number)? = object["count"], number.isInteger, let count = Int(number.text), count >= 0 else {
            return .failure(StateRecordError("count is not an integer of 0 or more"))
        }
        var updatedAt: Int64?
        switch object["updatedAt"] {
        case nil, .null?: break
        case .number(let number)? where number.isInteger:
            guard let milliseconds = Int64(number.text) else { return .failure(StateRecordError("updatedAt is out of range")) }
            updatedAt = milliseconds
        default: return .failure(StateRecordError("updatedAt is not an integer of milliseconds"))
        }
        return .success(Entry(count: count, updatedAt: updatedAt))
    }
}
