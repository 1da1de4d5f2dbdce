import JSON

extension APS {
    /// Checks an `aps` object against the type rules of SEMANTICS.md section 2, in the order its keys are
    /// written, and returns the facts the rules of delivery read. The only place these rules live.
    ///
    /// Values are inspected, never kept: nothing is copied out of the object, which keeps validation free
    /// of reference counting.
    /// - Parameter allowsLocObjects: whether `alert.title`, `alert.subtitle` and `alert.body` may be
    ///   `{"loc-key", "loc-args"}` objects (push type `liveactivity` in the `modern` profile, section 14.1).
    static func check(_ object: JSONObject, allowsLocObjects: Bool = false) throws(PayloadError) -> Payload.Traits {
        var traits = Payload.Traits()
        for member in object.members {
            switch PayloadKey(member.key) {
            case .alert:
                traits.hasAlert = true
                traits.hasAlertText = try checkAlert(member.value, allowsLocObjects: allowsLocObjects)
                traits.hidesViewButton = member.value.objectValue?["show-view"] == .bool(false)
            case .badge:
                try requireInteger(member.value, "aps.badge")
                traits.hasBadge = true
                if case .number(let number) = member.value {
                    traits.badgeIsZero = number.isZero
                    var text = number.text
                    traits.badgeNumber = text.withUTF8 { Payload.Traits.integer($0) }
                }
            case .sound:
                try checkSound(member.value)
                traits.hasSound = true
            case .contentAvailable:
                try requireInteger(member.value, "aps.content-available")
                traits.contentAvailable = isOne(member.value)
            case .mutableContent:
                try requireInteger(member.value, "aps.mutable-content")
                traits.mutableContent = isOne(member.value)
            case .category:
                guard case .string(let category) = member.value else { throw .wrongType("aps.category", member.value, expected: "a string") }
                traits.category = category
            case .threadID: try requireString(member.value, "aps.thread-id")
            case .targetContentID: try requireString(member.value, "aps.target-content-id")
            case .filterCriteria: try requireString(member.value, "aps.filter-criteria")
            case .interruptionLevel:
                guard case .string(let text) = member.value else {
                    throw .wrongType("aps.interruption-level", member.value, expected: "a string")
                }
                traits.interruptionLevel = InterruptionLevel(rawValue: text)
                guard traits.interruptionLevel != nil else {
                    throw PayloadError(
                        keyPath: "aps.interruption-level",
                        message: "The payload key aps.interruption-level must be one of passive, active, time-sensitive or critical, but it is \(MessageText.quote(text))."
                    )
                }
            case .relevanceScore:
                guard case .number = member.value else { throw .wrongType("aps.relevance-score", member.value, expected: "a number") }
            case .event:
                guard case .string(let text) = member.value else { throw .wrongType("aps.event", member.value, expected: "a string") }
                guard ["start", "update", "end"].contains(text) else {
                    throw PayloadError(
                        keyPath: "aps.event",
                        message: "The payload key aps.event must be one of start, update or end, but it is \(MessageText.quote(text))."
                    )
                }
            case .timestamp: try requireInteger(member.value, "aps.timestamp")
            case .staleDate: try requireInteger(member.value, "aps.stale-date")
            case .dismissalDate: try requireInteger(member.value, "aps.dismissal-date")
            case .inputPushToken: try requireInteger(member.value, "aps.input-push-token")
            case .contentState:
                guard case .object = member.value else { throw .wrongType("aps.content-state", member.value, expected: "an object") }
            case .attributes:
                guard case .object = member.value else { throw .wrongType("aps.attributes", member.value, expected: "an object") }
            case .attributesType: try requireString(member.value, "aps.attributes-type")
            case .inputPushChannel: try requireString(member.value, "aps.input-push-channel")
            case .contentChanged:
                guard case .bool(let changed) = member.value else {
                    throw .wrongType("aps.content-changed", member.value, expected: "a boolean")
                }
                traits.contentChanged = changed
            default:
                // Unknown keys are kept and ignored.
                break
            }
        }
        return traits
    }

    /// Checks the alert (a string or an object of typed keys) and tells whether it has text.
    private static func checkAlert(_ value: JSONValue, allowsLocObjects: Bool) throws(PayloadError) -> Bool {
        switch value {
        case .string(let text): return !text.isEmpty
        case .object(let object):
            var hasText = false
            for member in object.members {
                let key = PayloadKey(member.key)
                switch key {
                case .title, .subtitle, .body:
                    if allowsLocObjects, case .object(let loc) = member.value {
                        if try checkLocObject(loc, member) { hasText = true }
                        continue
                    }
                    guard case .string(let text) = member.value else {
                        throw alertError(member, expected: allowsLocObjects ? "a string or a {\"loc-key\", \"loc-args\"} object" : "a string")
                    }
                    if !text.isEmpty { hasText = true }
                case .titleLocKey, .subtitleLocKey, .locKey:
                    guard case .string(let text) = member.value else { throw alertError(member, expected: "a string") }
                    if !text.isEmpty { hasText = true }
                case .launchImage:
                    guard case .string = member.value else { throw alertError(member, expected: "a string") }
                case .titleLocArgs, .subtitleLocArgs, .locArgs:
                    guard case .array(let elements) = member.value, elements.allSatisfy({ $0.stringValue != nil }) else {
                        throw alertError(member, expected: "an array of strings")
                    }
                case .showView:
                    guard case .bool = member.value else { throw alertError(member, expected: "a boolean") }
                case .actionLocKey:
                    switch member.value {
                    case .null, .string: break
                    default: throw alertError(member, expected: "a string or null")
                    }
                default: break
                }
            }
            return hasText
        default:
            throw .wrongType("aps.alert", value, expected: "a string or an object")
        }
    }

    /// Checks a Live Activity loc object (`{"loc-key": string, "loc-args": [strings]}`, other keys
    /// kept and ignored) and tells whether its `loc-key` is non-empty (section 14.1).
    private static func checkLocObject(_ object: JSONObject, _ member: JSONObject.Member) throws(PayloadError) -> Bool {
        guard case .string(let key)? = object["loc-key"] else {
            throw PayloadError(
                keyPath: "aps.alert.\(member.key).loc-key",
                message: "The payload key aps.alert.\(member.key) is an object, so it needs loc-key, a string.")
        }
        if let args = object["loc-args"] {
            guard case .array(let elements) = args, elements.allSatisfy({ $0.stringValue != nil }) else {
                throw .wrongType("aps.alert.\(member.key).loc-args", args, expected: "an array of strings")
            }
        }
        return !key.isEmpty
    }

    /// The wrong-type error for a key of the alert object; the key path is spelled out only here.
    private static func alertError(_ member: JSONObject.Member, expected: String) -> PayloadError {
        .wrongType("aps.alert." + member.key, member.value, expected: expected)
    }

    /// Checks the sound: a name, or the object with `critical` (integer), `name` (string), `volume` (0 to 1).
    private static func checkSound(_ value: JSONValue) throws(PayloadError) {
        switch value {
        case .string: return
        case .object(let object):
            for member in object.members {
                switch PayloadKey(member.key) {
                case .critical: try requireInteger(member.value, "aps.sound.critical")
                case .name: try requireString(member.value, "aps.sound.name")
                case .volume:
                    guard case .number(let volume) = member.value else {
                        throw .wrongType("aps.sound.volume", member.value, expected: "a number from 0 to 1")
                    }
                    let level = volume.doubleValue
                    guard level >= 0, level <= 1 else {
                        throw PayloadError(
                            keyPath: "aps.sound.volume",
                            message: "The payload key aps.sound.volume must be a number from 0 to 1, but it is \(MessageText.truncate(volume.text))."
                        )
                    }
                default: break
                }
            }
        default:
            throw .wrongType("aps.sound", value, expected: "a string or an object")
        }
    }

    /// Requires a string.
    private static func requireString(_ value: JSONValue, _ keyPath: StaticString) throws(PayloadError) {
        guard case .string = value else { throw .wrongType("\(keyPath)", value, expected: "a string") }
    }

    /// Requires an integer: a number without fraction or exponent.
    private static func requireInteger(_ value: JSONValue, _ keyPath: StaticString) throws(PayloadError) {
        guard case .number(let number) = value, number.isInteger else {
            throw .wrongType("\(keyPath)", value, expected: "an integer (a number without fraction or exponent)")
        }
    }

    /// Whether an integer is 1 (the integer rule excludes `1.0`, so 1 is spelled `1`).
    private static func isOne(_ value: JSONValue) -> Bool {
        if case .number(let number) = value { return number.text == "1" }
        return false
    }
}
