import Notifications
package import Records
import Synchronization

/// The devices table of SEMANTICS section 11.2, kept current from the compacted devices topic:
/// key = device token, value = a ``DeviceEntry`` record, a null value deletes the entry; a new value
/// replaces the old one whole. Reads and updates may come from any task.
package final class DevicesTable: DeviceLookup {
    /// What one devices record did to the table.
    package enum Update: Sendable, Hashable {
        /// The token's entry was set.
        case set(deviceToken: String, entry: DeviceEntry)
        /// The token's entry was removed (a null value).
        case deleted(deviceToken: String)
        /// The record was ignored; the reason is for the log (never contains the key or value).
        case invalid(reason: String)
    }

    /// Entries by normalised (lowercase) device token.
    private let entries = Mutex<[String: DeviceEntry]>([:])

    /// An empty table.
    package init() {}

    /// The number of entries.
    package var count: Int { entries.withLock { $0.count } }

    /// Forgets every entry: a worker does this when its partitions are reassigned, before it
    /// restores those it then owns (docs/worker.md, "Partitioned state").
    package func removeAll() {
        entries.withLock { $0.removeAll() }
    }

    /// The entry of `deviceToken` (normalised lowercase hex), nil when unknown.
    ///
    /// An empty table answers without hashing the token: most deployments keep no devices
    /// table, and this runs for every request.
    package func device(forDeviceToken deviceToken: String) -> DeviceEntry? {
        entries.withLock { $0.isEmpty ? nil : $0[deviceToken] }
    }

    /// The entry of a record key's token; an empty table answers without a string of the token.
    package func device(forKey key: UnsafeRawBufferPointer) -> DeviceEntry? {
        guard count > 0 else { return nil }
        return device(forDeviceToken: DeviceToken.lowercased(key))
    }

    /// Applies one record of the devices topic.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        guard let key, let token = AppStatesTable.normalisedToken(key) else {
            return .invalid(reason: "the key is not a device token (64 to 200 hexadecimal characters, even length)")
        }
        guard let value else {
            entries.withLock { _ = $0.removeValue(forKey: token) }
            return .deleted(deviceToken: token)
        }
        do throws(DeviceEntryError) {
            let entry = try DeviceEntry(parsing: value)
            entries.withLock { $0[token] = entry }
            return .set(deviceToken: token, entry: entry)
        } catch {
            return .invalid(reason: error.message)
        }
    }
}
