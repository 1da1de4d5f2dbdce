import JSON

extension APS {
    /// Checks an `aps` object against the type rules of SEMANTICS.md section 2, in the order its keys are
    /// written, and returns the facts the rules of delivery read. The only place these rules live.
    ///
    /// Values are inspected, never kept: nothing is copied out of the object, which keeps validation free
    /// of reference counting.
    static func check(_ object: JSONObject) throws(PayloadError) -> Payload.Traits {
        var traits = Payload.Traits()
        for member in object.members {
            switch PayloadKey(member.key) {
            case .alert:
                traits.hasAlert = true
                traits.hasAlertText = try checkAlert(member.value)
            case .badge:
                try requireInteger(member.value, "aps.badge")
                traits.hasBadge = true
                if case .number(let number) = member.value { traits.badgeIsZero = number.isZero }
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
                guard InterruptionLevel(rawValue: text) != nil else {
                    throw PayloadError(
                        keyPath: "aps.interruption-level",
                        message: "The payload key aps.interruption-level must be one of passive, active, time-sensitive or critical, but it is \(MessageText.quote(text))."
                    )
                }
            case .relevanceScore:
                guard case .number = member.value else { throw .wrongType("aps.relevance-score", member.value, expected: "a number") }
            default:
                // Live Activity keys have no type rule in SEMANTICS.md; unknown keys are kept and ignored.
                break
            }
        }
        return traits
    }

    /// Checks the alert (a string or an object of typed keys) and tells whether it has text.
    private static func checkAlert(_ value: JSONValue) throws(PayloadError) -> Bool {
        switch value {
        case .string(let text): return !text.isEmpty
        case .object(let object):
            var hasText = false
            for member in object.members {
                let key = PayloadKey(member.key)
                switch key {
                case .title, .subtitle, .body, .titleLocKey, .subtitleLocKey, .locKey:
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
