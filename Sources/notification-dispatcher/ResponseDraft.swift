import ArgumentParser
import Dispatcher
import DispatcherTools
import JSON
import Notifications

/// The response `send --response` produces (SEMANTICS section 10), built from its input: a delivery
/// record (or a `dispatch` output line holding one), or a bare payload with the missing parts
/// given as options. Options win over what the input says.
struct ResponseDraft {
    /// The record key.
    let deviceToken: String
    /// The `apns-topic` header.
    let bundleID: String
    /// The notification's `apns-id`.
    let notificationID: String
    /// The record value: `{"notification": {"apnsId", "payload"}, "actionIdentifier" | "mediaCommand", "userText"}`.
    let value: [UInt8]

    /// `default` and `dismiss` stand for Apple's identifiers; anything else is taken as written.
    static func action(named name: String) -> ResponseAction {
        switch name {
        case "default": .defaultAction
        case "dismiss": .dismiss
        default: ResponseAction(identifier: name)
        }
    }

    /// Builds the response.
    /// - Throws: `ValidationError` when the input is not JSON, or a part is missing from both the
    ///   input and the options.
    init(
        input: [UInt8], action: ResponseAction, userText: String?, token: String?, bundleID: String?,
        notificationID: String?
    ) throws {
        let delivery = try Self.delivery(in: input)
        let payload: JSONValue
        if let recorded = delivery["payload"], delivery["apnsId"] != nil {
            payload = recorded
        } else if delivery["aps"] != nil {
            payload = .object(delivery)
        } else {
            throw ValidationError("the input is neither a delivery record (apnsId, deviceToken, bundleId, payload) nor a payload (aps)")
        }
        func part(_ option: String?, _ key: String, _ flag: String) throws -> String {
            if let option { return option }
            guard let recorded = delivery[key]?.stringValue else {
                throw ValidationError("give \(flag): the input has no \(key)")
            }
            return recorded
        }
        deviceToken = try part(token, "deviceToken", "--token")
        self.bundleID = try part(bundleID, "bundleId", "--topic")
        self.notificationID = try part(notificationID, "apnsId", "--notification-id")

        var response = JSONObject([
            ("notification", .object(JSONObject([("apnsId", .string(self.notificationID)), ("payload", payload)])))
        ])
        if let command = action.mediaCommand {
            response["mediaCommand"] = .string(command.rawValue)
        } else if let identifier = action.identifier {
            response["actionIdentifier"] = .string(identifier)
        }
        if let userText { response["userText"] = .string(userText) }
        value = JSONValue.object(response).serialized()
    }

    /// The JSON object the input holds: the whole input, else its first non-blank line (a stream
    /// of records); a `dispatch` output line gives its `value`.
    private static func delivery(in input: [UInt8]) throws -> JSONObject {
        let firstLine = input.split(separator: UInt8(ascii: "\n")).first { !JSONLines.isBlank($0) }.map(Array.init)
        guard let object = (try? JSONValue(parsing: input))?.objectValue
            ?? firstLine.flatMap({ try? JSONValue(parsing: $0) })?.objectValue
        else {
            throw ValidationError("the input is not a JSON object")
        }
        if case .object(let value)? = object["value"], object["topic"] != nil { return value }
        return object
    }
}
