package import Records
import Synchronization

/// The stored table of SEMANTICS section 16: the newest notification per device and app, under
/// the key `<device token>/<bundle ID>`, kept current from the stored topic (a null value deletes
/// the entry) and changed by the rules, whose stored records and tombstones restore exactly what
/// they changed. It keeps each token's keys in the order they were stored (section 16.3).
///
/// - Important: the rules read and change it while preparing a record of the token's partition,
///   in order. Reads and changes may come from any thread.
package final class StoredNotifications: Sendable {
    /// What one stored record did to the table.
    package enum Update: Sendable {
        /// The key's notification was set.
        case set(key: String, notification: StoredNotification)
        /// The key's notification was removed (a null value).
        case deleted(key: String)
        /// The record was ignored; the reason is for the log.
        case invalid(reason: String)
    }

    /// Notifications by key, each token's keys in stored order, and the refusals.
    private struct State {
        var entries: [String: StoredNotification] = [:]
        var keysByToken: [String: [String]] = [:]
        var refused = 0

        mutating func store(_ notification: StoredNotification) {
            let key = notification.key
            if entries.updateValue(notification, forKey: key) != nil {
                keysByToken[notification.deviceToken]?.removeAll { $0 == key }
            }
            // A replacement is stored anew: it goes last in its token's order.
            keysByToken[notification.deviceToken, default: []].append(key)
        }

        mutating func remove(_ key: String) {
            guard let old = entries.removeValue(forKey: key) else { return }
            keysByToken[old.deviceToken]?.removeAll { $0 == key }
            if keysByToken[old.deviceToken]?.isEmpty == true { keysByToken[old.deviceToken] = nil }
        }
    }

    private let state = Mutex(State())
    /// The most notifications the table may hold (`dispatch.stateLimits.stored`).
    package let limit: Int

    /// An empty table of at most `limit` notifications.
    package init(limit: Int = StateLimits.defaultLimit) {
        self.limit = max(1, limit)
    }

    /// The number of stored notifications.
    package var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every notification (the count of refusals goes on): a worker does this when its
    /// partitions are reassigned, before it restores those it then owns from their changelogs
    /// (docs/worker.md, "Partitioned state").
    package func removeAll() {
        state.withLock { state in
            let refused = state.refused
            state = State()
            state.refused = refused
        }
    }

    /// The count, the limit and the refusals, for metrics.
    package var usage: StateUsage {
        state.withLock { StateUsage(count: $0.entries.count, limit: limit, evicted: 0, refused: $0.refused) }
    }

    /// Whether any notification is stored (an empty table is skipped without hashing).
    package var isEmpty: Bool { state.withLock { $0.entries.isEmpty } }

    /// The notification stored under `key`, nil when none.
    package func notification(forKey key: String) -> StoredNotification? {
        state.withLock { $0.entries[key] }
    }

    /// The keys stored for `deviceToken`, in the order they were stored.
    package func keys(forDeviceToken deviceToken: String) -> [String] {
        state.withLock { $0.entries.isEmpty ? [] : $0.keysByToken[deviceToken] ?? [] }
    }

    /// Applies one record of the stored topic.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        guard let key, let text = String(validating: key, as: UTF8.self), let slash = text.firstIndex(of: "/"),
            let token = AppStatesTable.normalisedToken(text[..<slash].utf8), text.index(after: slash) < text.endIndex
        else {
            return .invalid(reason: "the key is not <device token>/<bundle ID>")
        }
        let normalisedKey = StoredNotification.key(deviceToken: token, bundleID: String(text[text.index(after: slash)...]))
        guard let value else {
            state.withLock { $0.remove(normalisedKey) }
            return .deleted(key: normalisedKey)
        }
        do throws(StateRecordError) {
            let notification = try StoredNotification(parsing: value)
            guard notification.key == normalisedKey else { return .invalid(reason: "the value's deviceToken and bundleId are not the key's") }
            state.withLock { $0.store(notification) }
            return .set(key: normalisedKey, notification: notification)
        } catch {
            return .invalid(reason: error.message)
        }
    }

    /// Stores `notification` (the rules, section 16.1), unless it is a new key and the table is
    /// full: then nothing changes and a refusal is counted.
    /// - Returns: whether it was stored.
    func store(_ notification: StoredNotification) -> Bool {
        state.withLock { state in
            if state.entries[notification.key] == nil, state.entries.count >= limit {
                state.refused += 1
                return false
            }
            state.store(notification)
            return true
        }
    }

    /// Removes the notification stored under `key`, returning it.
    func remove(_ key: String) -> StoredNotification? {
        state.withLock { state in
            let old = state.entries[key]
            state.remove(key)
            return old
        }
    }
}
