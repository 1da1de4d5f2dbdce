extension APS {
    /// Reads and type-checks an `aps` object (SEMANTICS.md section 2), in the order its keys are written.
    init(validating object: JSONObject) throws(PayloadError) {
        self.init()
        for member in object.members {
            let value = member.value
            switch PayloadKey(member.key) {
            case .alert: alert = try Self.alert(value)
            case .badge: badge = try Self.integer(value, "aps.badge")
            case .sound: sound = try Self.sound(value)
            case .contentAvailable: contentAvailable = try Self.integer(value, "aps.content-available")
            case .mutableContent: mutableContent = try Self.integer(value, "aps.mutable-content")
            case .category: category = try Self.string(value, "aps.category")
            case .threadID: threadID = try Self.string(value, "aps.thread-id")
            case .targetContentID: targetContentID = try Self.string(value, "aps.target-content-id")
            case .filterCriteria: filterCriteria = try Self.string(value, "aps.filter-criteria")
            case .interruptionLevel:
                let text = try Self.string(value, "aps.interruption-level")
                guard let level = InterruptionLevel(rawValue: text) else {
                    throw PayloadError(
                        keyPath: "aps.interruption-level",
                        message: "The payload key aps.interruption-level must be one of passive, active, time-sensitive or critical, but it is \(MessageText.quote(text))."
                    )
                }
                interruptionLevel = level
            case .relevanceScore:
                guard case .number(let number) = value else {
                    throw .wrongType("aps.relevance-score", value, expected: "a number")
                }
                relevanceScore = number
            case .staleDate: staleDate = value.numberValue
            case .contentState: contentState = value.objectValue
            case .timestamp: timestamp = value.numberValue
            case .event: event = value.stringValue
            case .dismissalDate: dismissalDate = value.numberValue
            case .attributesType: attributesType = value.stringValue
            case .attributes: attributes = value.objectValue
            default: otherKeys.members.append(member)
            }
        }
    }

    /// A string, or the wrong-type error for `keyPath`.
    private static func string(_ value: JSONValue, _ keyPath: String) throws(PayloadError) -> String {
        guard case .string(let string) = value else { throw .wrongType(keyPath, value, expected: "a string") }
        return string
    }

    /// A string inside the alert object, or the wrong-type error naming `aps.alert.<key>`.
    private static func string(_ value: JSONValue, _ keyPath: AlertKeyPath) throws(PayloadError) -> String {
        guard case .string(let string) = value else { throw .wrongType(keyPath.text, value, expected: "a string") }
        return string
    }

    /// An array of strings inside the alert object, or the wrong-type error naming `aps.alert.<key>`.
    private static func strings(_ value: JSONValue, _ keyPath: AlertKeyPath) throws(PayloadError) -> [String] {
        guard case .array(let elements) = value else { throw .wrongType(keyPath.text, value, expected: "an array of strings") }
        var strings: [String] = []
        strings.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element else {
                throw .wrongType(keyPath.text, value, expected: "an array of strings")
            }
            strings.append(string)
        }
        return strings
    }

    /// The key path of an alert key, spelled out only when a message needs it.
    private struct AlertKeyPath {
        let key: String
        var text: String { "aps.alert." + key }
    }

    /// An integer (a number without fraction or exponent), or the wrong-type error for `keyPath`.
    private static func integer(_ value: JSONValue, _ keyPath: String) throws(PayloadError) -> JSONNumber {
        guard case .number(let number) = value, number.isInteger else {
            throw .wrongType(keyPath, value, expected: "an integer (a number without fraction or exponent)")
        }
        return number
    }

    /// `aps.alert`: a string or an object of typed keys.
    private static func alert(_ value: JSONValue) throws(PayloadError) -> Alert {
        switch value {
        case .string(let text): return .text(text)
        case .object(let object):
            var fields = AlertFields()
            for member in object.members {
                let value = member.value
                // The key path is only spelled out for a message: building it for every key would cost an allocation.
                let path = AlertKeyPath(key: member.key)
                switch PayloadKey(member.key) {
                case .title: fields.title = try string(value, path)
                case .subtitle: fields.subtitle = try string(value, path)
                case .body: fields.body = try string(value, path)
                case .launchImage: fields.launchImage = try string(value, path)
                case .titleLocKey: fields.titleLocKey = try string(value, path)
                case .subtitleLocKey: fields.subtitleLocKey = try string(value, path)
                case .locKey: fields.locKey = try string(value, path)
                case .titleLocArgs: fields.titleLocArgs = try strings(value, path)
                case .subtitleLocArgs: fields.subtitleLocArgs = try strings(value, path)
                case .locArgs: fields.locArgs = try strings(value, path)
                case .showView:
                    guard case .bool(let flag) = value else { throw .wrongType(path.text, value, expected: "a boolean") }
                    fields.showView = flag
                case .actionLocKey:
                    switch value {
                    case .null: fields.actionLocKey = ActionLocKey.none
                    case .string(let key): fields.actionLocKey = .key(key)
                    default: throw .wrongType(path.text, value, expected: "a string or null")
                    }
                default: fields.otherKeys.members.append(member)
                }
            }
            return .fields(fields)
        default:
            throw .wrongType("aps.alert", value, expected: "a string or an object")
        }
    }

    /// `aps.sound`: a name, or the object with `critical` (integer), `name` (string), `volume` (0 to 1).
    private static func sound(_ value: JSONValue) throws(PayloadError) -> Sound {
        switch value {
        case .string(let name): return .named(name)
        case .object(let object):
            var sound = CriticalSound()
            for member in object.members {
                let value = member.value
                switch PayloadKey(member.key) {
                case .critical: sound.critical = try integer(value, "aps.sound.critical")
                case .name: sound.name = try string(value, "aps.sound.name")
                case .volume:
                    guard case .number(let volume) = value else {
                        throw .wrongType("aps.sound.volume", value, expected: "a number from 0 to 1")
                    }
                    let level = volume.doubleValue
                    guard level >= 0, level <= 1 else {
                        throw PayloadError(
                            keyPath: "aps.sound.volume",
                            message: "The payload key aps.sound.volume must be a number from 0 to 1, but it is \(MessageText.truncate(volume.text))."
                        )
                    }
                    sound.volume = volume
                default: sound.otherKeys.members.append(member)
                }
            }
            return .critical(sound)
        default:
            throw .wrongType("aps.sound", value, expected: "a string or an object")
        }
    }
}
