import JSON

extension APS {
    /// Checks an `aps` object (SEMANTICS.md section 2, see `check(_:)`) and builds its typed view.
    init(validating object: JSONObject) throws(PayloadError) {
        _ = try Self.check(object)
        self.init(checked: object)
    }

    /// Builds the typed view of an object that passed `check(_:)`: every documented key of the
    /// documented type is typed; the rest is kept in `otherKeys` (unknown keys) or left in the JSON.
    init(checked object: JSONObject) {
        self.init()
        for member in object.members {
            let value = member.value
            switch PayloadKey(member.key) {
            case .alert:
                switch value {
                case .string(let text): alert = .text(text)
                case .object(let fields): alert = .fields(AlertFields(checked: fields))
                default: break
                }
            case .badge: badge = value.numberValue
            case .sound:
                switch value {
                case .string(let name): sound = .named(name)
                case .object(let fields): sound = .critical(CriticalSound(checked: fields))
                default: break
                }
            case .contentAvailable: contentAvailable = value.numberValue
            case .mutableContent: mutableContent = value.numberValue
            case .category: category = value.stringValue
            case .threadID: threadID = value.stringValue
            case .targetContentID: targetContentID = value.stringValue
            case .filterCriteria: filterCriteria = value.stringValue
            case .interruptionLevel: interruptionLevel = value.stringValue.flatMap(InterruptionLevel.init(rawValue:))
            case .relevanceScore: relevanceScore = value.numberValue
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
}

extension AlertFields {
    /// Builds the typed alert of an object that passed the rules.
    init(checked object: JSONObject) {
        self.init()
        for member in object.members {
            let value = member.value
            switch PayloadKey(member.key) {
            case .title: title = value.stringValue
            case .subtitle: subtitle = value.stringValue
            case .body: body = value.stringValue
            case .launchImage: launchImage = value.stringValue
            case .titleLocKey: titleLocKey = value.stringValue
            case .subtitleLocKey: subtitleLocKey = value.stringValue
            case .locKey: locKey = value.stringValue
            case .titleLocArgs: titleLocArgs = value.arrayValue?.compactMap(\.stringValue)
            case .subtitleLocArgs: subtitleLocArgs = value.arrayValue?.compactMap(\.stringValue)
            case .locArgs: locArgs = value.arrayValue?.compactMap(\.stringValue)
            case .showView: showView = value.boolValue
            case .actionLocKey:
                switch value {
                case .null: actionLocKey = ActionLocKey.none
                case .string(let key): actionLocKey = .key(key)
                default: break
                }
            default: otherKeys.members.append(member)
            }
        }
    }
}

extension CriticalSound {
    /// Builds the typed sound object of an object that passed the rules.
    init(checked object: JSONObject) {
        self.init()
        for member in object.members {
            switch PayloadKey(member.key) {
            case .critical: critical = member.value.numberValue
            case .name: name = member.value.stringValue
            case .volume: volume = member.value.numberValue
            default: otherKeys.members.append(member)
            }
        }
    }
}
