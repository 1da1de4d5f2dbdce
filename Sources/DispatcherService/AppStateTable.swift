public import Dispatcher
public import Notifications
import Synchronization

/// The app-states table of SEMANTICS.md section 9: device token → app state, kept current from the
/// compacted app-states topic, read by the dispatcher as its app-state lookup.
///
/// Every worker holds the whole table (it reads the topic outside the consumer group), so any
/// worker can decide for any device.
public final class AppStateTable: AppStateLookup, Sendable {
    private let states = Mutex<[String: AppState]>([:])

    /// Creates an empty table.
    public init() {}

    /// The state recorded for a device, if any.
    public func appState(forDeviceToken deviceToken: String) -> AppState? {
        states.withLock { $0[deviceToken] }
    }

    /// How many devices have a recorded state.
    public var count: Int { states.withLock { $0.count } }

    /// Applies one record of the app-states topic.
    ///
    /// - Parameters:
    ///   - key: the device token (any case; normalised to lowercase hex like request keys).
    ///   - value: `{"state": STATE}`, or `nil` (a tombstone) to delete the entry.
    /// - Returns: why the record was ignored, or `nil` when it was applied.
    @discardableResult
    public func apply(key: [UInt8]?, value: [UInt8]?) -> AppStateRecordError? {
        guard let key, !key.isEmpty, let token = String(validating: key, as: UTF8.self) else {
            return .missingKey
        }
        let deviceToken = token.lowercased()
        guard let value else {
            states.withLock { _ = $0.removeValue(forKey: deviceToken) }
            return nil
        }
        guard let json = try? JSONValue(parsing: value),
            let object = json.objectValue,
            let stateText = object["state"]?.stringValue
        else {
            return .malformedValue
        }
        guard let state = AppState(rawValue: stateText) else {
            return .unknownState(stateText)
        }
        states.withLock { $0[deviceToken] = state }
        return nil
    }
}

/// Why a record of the app-states topic was ignored (logged, never fatal: SEMANTICS.md section 9).
public enum AppStateRecordError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The record has no device token as its key.
    case missingKey
    /// The value is not a JSON object with a string `state`.
    case malformedValue
    /// The state is not one of section 1's app states.
    case unknownState(String)

    public var description: String {
        switch self {
        case .missingKey: "the record has no device token key"
        case .malformedValue: #"the value is not {"state": STATE}"#
        case .unknownState(let state):
            "the state \"\(state.prefix(40))\" is not one of foreground, background, suspended, notRunning, forceQuit"
        }
    }
}
