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
    /// `since`: when the token stopped being valid, in milliseconds since the epoch (required for
    /// `unregistered` and `expired`).
    package var since: Int64?
    /// Every other field, packed into one integer (``Packed``).
    ///
    /// Each request is decided on its token's entry, passed as a `DeviceEntry?` to several rules.
    /// With the fields stored one by one (a string, a number, four enums, five Booleans),
    /// the compiler copied and destroyed that optional through the runtime's value witnesses
    /// (metadata looked up, then a generic `Optional` witness calling the entry's own): about
    /// 150 instructions a request in `bench counts` (1.45 copies and their destroys). Packed, a
    /// copy is the string's retain.
    private var packed = Packed.defaults

    /// `environment`: the APNs environment that issued the token; nil when not said.
    package var environment: APNsEnvironment? {
        get { Packed.environment(at: packed[.environment]) }
        set { packed[.environment] = Packed.index(of: newValue) }
    }
    /// `token`.
    package var token: TokenStatus {
        get { TokenStatus(packedIndex: packed[.token]) }
        set { packed[.token] = newValue.packedIndex }
    }
    /// `online`: whether the device is reachable now (section 16).
    package var online: Bool {
        get { packed[.online] == 1 }
        set { packed[.online] = newValue ? 1 : 0 }
    }
    /// `focus`.
    package var focus: Focus {
        get { Focus(packedIndex: packed[.focus]) }
        set { packed[.focus] = newValue.packedIndex }
    }
    /// `timeSensitive`: whether the user lets time-sensitive notifications break through Focus.
    package var timeSensitive: Bool {
        get { packed[.timeSensitive] == 1 }
        set { packed[.timeSensitive] = newValue ? 1 : 0 }
    }
    /// `authorization`, `alerts`, `sounds` and `badges`: the user's notification settings for the
    /// app (section 20).
    package var settings: NotificationSettings {
        get {
            NotificationSettings(
                authorization: NotificationSettings.Authorization(packedIndex: packed[.authorization]), alerts: packed[.alerts] == 1,
                sounds: packed[.sounds] == 1, badges: packed[.badges] == 1)
        }
        set {
            packed[.authorization] = newValue.authorization.packedIndex
            packed[.alerts] = newValue.alerts ? 1 : 0
            packed[.sounds] = newValue.sounds ? 1 : 0
            packed[.badges] = newValue.badges ? 1 : 0
        }
    }

    /// An entry with every default.
    package init() {}
}

extension DeviceEntry {
    /// The fields of an entry that are not a string or a number, as small integers side by side
    /// in one `UInt16`: an enum's case by its index (`packedIndex`), a Boolean as 0 or 1. One
    /// value has one packing, so the entry's synthesised `==` and hash stay those of its fields.
    fileprivate struct Packed: Sendable, Hashable {
        /// A field's place: its lowest bit and its width in bits.
        struct Field {
            let shift: UInt16
            let width: UInt16

            static let environment = Field(shift: 0, width: 2)
            static let token = Field(shift: 2, width: 2)
            static let online = Field(shift: 4, width: 1)
            static let focus = Field(shift: 5, width: 2)
            static let timeSensitive = Field(shift: 7, width: 1)
            static let authorization = Field(shift: 8, width: 2)
            static let alerts = Field(shift: 10, width: 1)
            static let sounds = Field(shift: 11, width: 1)
            static let badges = Field(shift: 12, width: 1)
        }

        /// `environment`'s index: 0 when not said, then its cases.
        static func index(of environment: APNsEnvironment?) -> Int {
            switch environment {
            case nil: 0
            case .production: 1
            case .sandbox: 2
            }
        }

        /// The `environment` at `index` (``index(of:)``).
        static func environment(at index: Int) -> APNsEnvironment? {
            switch index {
            case 1: .production
            case 2: .sandbox
            default: nil
            }
        }

        private var bits: UInt16 = 0

        /// The documented defaults: no environment, an active token, online, no Focus,
        /// time-sensitive allowed, and the default settings.
        static let defaults: Packed = {
            var packed = Packed()
            let entry = (token: TokenStatus.active, focus: Focus.none, settings: NotificationSettings.defaults)
            packed[.token] = entry.token.packedIndex
            packed[.online] = 1
            packed[.focus] = entry.focus.packedIndex
            packed[.timeSensitive] = 1
            packed[.authorization] = entry.settings.authorization.packedIndex
            packed[.alerts] = entry.settings.alerts ? 1 : 0
            packed[.sounds] = entry.settings.sounds ? 1 : 0
            packed[.badges] = entry.settings.badges ? 1 : 0
            return packed
        }()

        subscript(field: Field) -> Int {
            get { Int((bits >> field.shift) & (1 << field.width - 1)) }
            set {
                let mask: UInt16 = (1 << field.width - 1) << field.shift
                bits = bits & ~mask | UInt16(newValue) << field.shift & mask
            }
        }
    }
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

// Each enum's cases by a small index, written out: `allCases` makes an array at each call.

extension DeviceEntry.TokenStatus {
    fileprivate init(packedIndex: Int) {
        self = switch packedIndex {
        case 1: .unregistered
        case 2: .expired
        default: .active
        }
    }

    fileprivate var packedIndex: Int {
        switch self {
        case .active: 0
        case .unregistered: 1
        case .expired: 2
        }
    }
}

extension DeviceEntry.Focus {
    fileprivate init(packedIndex: Int) {
        self = switch packedIndex {
        case 1: .silencing
        case 2: .allowing
        default: .none
        }
    }

    fileprivate var packedIndex: Int {
        switch self {
        case .none: 0
        case .silencing: 1
        case .allowing: 2
        }
    }
}

extension NotificationSettings.Authorization {
    fileprivate init(packedIndex: Int) {
        self = switch packedIndex {
        case 1: .provisional
        case 2: .denied
        case 3: .notDetermined
        default: .authorized
        }
    }

    fileprivate var packedIndex: Int {
        switch self {
        case .authorized: 0
        case .provisional: 1
        case .denied: 2
        case .notDetermined: 3
        }
    }
}
