package import Records
import JSON
public import Notifications
import Synchronization

/// The app-states table of SEMANTICS section 9, kept current from the compacted app-states topic:
/// key = device token, value = `{"state": STATE}`, a null value deletes the entry. Reads and
/// updates may come from any task.
public final class AppStatesTable: AppStateLookup {
    /// What one app-states record did to the table.
    package enum Update: Sendable, Hashable {
        /// The token's state was set.
        case set(deviceToken: String, state: AppState)
        /// The token's entry was removed (a null value).
        case deleted(deviceToken: String)
        /// The record was ignored; the reason is for the log (never contains the key or value).
        case invalid(reason: String)
    }

    /// States by normalised (lowercase) device token.
    private let states = Mutex<[String: AppState]>([:])

    /// An empty table.
    public init() {}

    /// The number of entries.
    package var count: Int { states.withLock { $0.count } }

    /// The state of `deviceToken` (normalised lowercase hex), nil when unknown.
    public func appState(forDeviceToken deviceToken: String) -> AppState? {
        states.withLock { $0[deviceToken] }
    }

    /// The state of a record key's token; an empty table answers without a string of the token.
    public func appState(forKey key: UnsafeRawBufferPointer) -> AppState? {
        guard count > 0 else { return nil }
        return appState(forDeviceToken: DeviceToken.lowercased(key))
    }

    /// Applies one record of the app-states topic.
    @discardableResult
    package func apply(key: RecordBytes?, value: RecordBytes?) -> Update {
        guard let key, let token = Self.normalisedToken(key) else {
            return .invalid(reason: "the key is not a device token (64 to 200 hexadecimal characters, even length)")
        }
        guard let value else {
            states.withLock { _ = $0.removeValue(forKey: token) }
            return .deleted(deviceToken: token)
        }
        guard let object = (try? JSONValue(parsing: value))?.objectValue else {
            return .invalid(reason: "the value is not a JSON object")
        }
        guard let text = object["state"]?.stringValue, let state = AppState(rawValue: text) else {
            let allowed = AppState.allCases.map(\.rawValue).joined(separator: ", ")
            return .invalid(reason: "the value's state is missing or not one of \(allowed)")
        }
        states.withLock { $0[token] = state }
        return .set(deviceToken: token, state: state)
    }

    /// The lowercase token of `key`, nil unless it is 64 to 200 hexadecimal characters of even length
    /// (the key rule of every table keyed by device token, section 11.2).
    static func normalisedToken(_ key: some Collection<UInt8>) -> String? {
        guard (64...200).contains(key.count), key.count.isMultiple(of: 2) else { return nil }
        var lowered: [UInt8] = []
        lowered.reserveCapacity(key.count)
        for byte in key {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): lowered.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): lowered.append(byte + 32)
            default: return nil
            }
        }
        return String(decoding: lowered, as: UTF8.self)
    }
}
