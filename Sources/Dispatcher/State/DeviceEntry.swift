package import Records
import JSON

/// One entry of the devices table (SEMANTICS section 11.2): what is known of a device token.
/// Every field is optional in the record; absent fields take the documented defaults.
package struct DeviceEntry: Sendable, Hashable {
    /// `token`: whether APNs still takes the token.
    package enum TokenStatus: String, Sendable, Hashable, CaseIterable {
        /// The token is valid (the default).
        case active
        /// The app was uninstalled or the token revoked: `Unregistered` (410).
        case unregistered
        /// The token expired: `ExpiredToken` (410).
        case expired
    }

    /// `focus`: the device's Focus state (section 17.2).
    package enum Focus: String, Sendable, Hashable, CaseIterable {
        /// No Focus is on (the default).
        case none
        /// A Focus is on and silences this app.
        case silencing
        /// A Focus is on and allows this app.
        case allowing
    }

    /// `bundleId`: the app the token belongs to; nil when not said.
    package var bundleID: String?
    /// `environment`: the APNs environment that issued the token; nil when not said.
    package var environment: APNsEnvironment?
    /// `token`.
    package var token: TokenStatus = .active
    /// `since`: when the token stopped being valid, in milliseconds since the epoch (required for
    /// `unregistered` and `expired`).
    package var since: Int64?
    /// `online`: whether the device is reachable now (section 16).
    package var online: Bool = true
    /// `focus`.
    package var focus: Focus = .none
    /// `timeSensitive`: whether the user lets time-sensitive notifications break through Focus.
    package var timeSensitive: Bool = true
    /// `authorization`, `alerts`, `sounds` and `badges`: the user's notification settings for the
    /// app (section 20).
    package var settings = NotificationSettings.defaults

    /// An entry with every default.
    package init() {}
}

extension DeviceEntry {
    /// Reads a devices record's value; a field whose value is null counts as absent, unknown fields
    /// are ignored.
    /// - Throws: ``DeviceEntryError`` naming the field that is wrong, never quoting the value.
    package init(parsing value: RecordBytes) throws(DeviceEntryError) {
        guard let object = (try? JSONValue(parsing: value))?.objectValue else { throw DeviceEntryError("the value is not a JSON object") }
        self.init()
        func field(_ name: String) -> JSONValue? {
            guard let value = object[name], !value.isNull else { return nil }
            return value
        }
        if let value = field("bundleId") {
            guard let text = value.stringValue else { throw DeviceEntryError("bundleId is not a string") }
            bundleID = text
        }
        if let value = field("environment") {
            guard let text = value.stringValue, let environment = APNsEnvironment(rawValue: text) else {
                throw DeviceEntryError("environment is not production or sandbox")
            }
            self.environment = environment
        }
        if let value = field("token") {
            guard let text = value.stringValue, let token = TokenStatus(rawValue: text) else {
                throw DeviceEntryError("token is not active, unregistered or expired")
            }
            self.token = token
        }
        if let value = field("since") {
            guard let number = value.numberValue, number.isInteger, let since = Int64(number.text), since >= 0 else {
                throw DeviceEntryError("since is not a non-negative integer of milliseconds")
            }
            self.since = since
        }
        if let value = field("online") {
            guard case .bool(let online) = value else { throw DeviceEntryError("online is not a boolean") }
            self.online = online
        }
        if let value = field("focus") {
            guard let text = value.stringValue, let focus = Focus(rawValue: text) else {
                throw DeviceEntryError("focus is not none, silencing or allowing")
            }
            self.focus = focus
        }
        if let value = field("timeSensitive") {
            guard case .bool(let allowed) = value else { throw DeviceEntryError("timeSensitive is not a boolean") }
            timeSensitive = allowed
        }
        if let value = field("authorization") {
            guard let text = value.stringValue, let authorization = NotificationSettings.Authorization(rawValue: text) else {
                throw DeviceEntryError("authorization is not authorized, provisional, denied or notDetermined")
            }
            settings.authorization = authorization
        }
        for (name, setting) in [("alerts", \NotificationSettings.alerts), ("sounds", \.sounds), ("badges", \.badges)] {
            guard let value = field(name) else { continue }
            guard case .bool(let allowed) = value else { throw DeviceEntryError("\(name) is not a boolean") }
            settings[keyPath: setting] = allowed
        }
        if token != .active, since == nil {
            throw DeviceEntryError("since is required when token is \(token.rawValue)")
        }
    }
}
