import Records
public import Foundation
import JSON

/// Turns a response record into a `NotificationResponse`, or a `Rejection` (SEMANTICS.md section 10).
///
/// The checks run in the order of section 10; the first failure is the reason: the device token
/// (the request's rules), `apns-topic` (present, a bundle ID without push-type suffix, configured
/// when `apps` is not empty), `app-state`, then the value's shape (`InvalidResponse`). Whether the
/// action exists for the notification is the dispatcher's check (`UnknownAction`): it needs the
/// app's configuration.
public struct ResponseValidator: Sendable {
    /// The bundle IDs configured under `apps`; empty allows every app.
    public let allowedBundleIDs: Set<String>

    /// Makes a validator.
    public init(allowedBundleIDs: Set<String> = []) {
        self.allowedBundleIDs = allowedBundleIDs
    }

    /// Validates one response record.
    ///
    /// - Parameters:
    ///   - record: The record as received.
    ///   - receivedAt: The time of processing, kept on the response.
    /// - Returns: The response, or the rejection of the first rule it breaks.
    public func validate(_ record: RequestRecord, receivedAt: Date = Date()) -> Result<NotificationResponse, Rejection> {
        do throws(Rejection) {
            return .success(try check(record, receivedAt: receivedAt))
        } catch {
            return .failure(error)
        }
    }

    /// The checks, in order.
    private func check(_ record: RequestRecord, receivedAt: Date) throws(Rejection) -> NotificationResponse {
        let deviceToken = try RequestValidator.deviceToken(record.key)
        let headers = RequestHeaders(record.headers)
        guard let topicBytes = headers.topic, !topicBytes.isEmpty else {
            throw Rejection(.missingTopic, "The apns-topic header is missing or empty.")
        }
        guard let topic = topicBytes.withUnsafeBufferPointer(UTF8Check.string) else {
            throw Rejection(.badTopic, "The apns-topic header \(MessageText.quote(bytes: topicBytes)) is not valid UTF-8.")
        }
        if let (pushType, suffix) = RequestValidator.suffixedPushType(of: topic) {
            throw Rejection(
                .badTopic,
                "The apns-topic header \(MessageText.quote(topic)) ends in \(MessageText.quote(suffix)), the suffix of the push type \(pushType.rawValue); a response's apns-topic is the app's bundle ID alone."
            )
        }
        try RequestValidator.requireAllowed(topic, topic: topic, allowed: allowedBundleIDs)
        let appState = try headers.appState.map(RequestValidator.appState)
        let body = try ResponseBody(record.value)
        return NotificationResponse(
            deviceToken: deviceToken,
            bundleID: topic,
            appStateOverride: appState,
            traceparent: headers.traceparent.map { String(decoding: $0, as: UTF8.self) },
            notificationID: body.notificationID,
            payload: body.payload,
            action: body.action,
            userText: body.userText,
            headers: record.headers,
            source: record.source,
            receivedAt: receivedAt
        )
    }
}

/// The value of a response record, checked for its shape: `{"notification": {"apnsId", "payload"},
/// "actionIdentifier" | "mediaCommand", "userText"?}`. Every mistake is `InvalidResponse`.
///
/// Unknown keys are refused rather than ignored: a misspelt `userText` would otherwise turn a
/// reply into a response without text, decided differently and silently.
private struct ResponseBody {
    var notificationID: String
    var payload: Payload
    var action: ResponseAction
    var userText: String?

    /// The keys of the value and of its `notification`.
    private static let keys = ["notification", "actionIdentifier", "mediaCommand", "userText"]
    private static let notificationKeys = ["apnsId", "payload"]

    init(_ value: RecordBytes?) throws(Rejection) {
        guard let value, !value.isEmpty else {
            throw Self.invalid("The response (the record value) is empty; it must be a JSON object with notification and actionIdentifier or mediaCommand.")
        }
        let json: JSONValue
        do throws(JSONParseError) {
            // Two levels deeper than a payload may be: the payload sits at notification.payload.
            json = try JSONValue(parsingPayload: value, maxDepth: JSONValue.maximumDepth + 2)
        } catch {
            throw Self.invalid("The response (the record value) is not valid JSON: \(error.message) at byte \(error.offset).")
        }
        guard case .object(let object) = json else {
            throw Self.invalid("The response (the record value) must be a JSON object, but it is the \(json.typeName) \(MessageText.quote(json)).")
        }
        try Self.rejectUnknownKeys(object, allowed: Self.keys, in: "The response")

        guard case .object(let notification)? = object["notification"] else {
            throw Self.invalid("The response's notification must be an object with apnsId and payload\(Self.found(object["notification"])).")
        }
        try Self.rejectUnknownKeys(notification, allowed: Self.notificationKeys, in: "The response's notification")
        guard case .string(let id)? = notification["apnsId"], let notificationID = MessageID.normalized(id) else {
            throw Self.invalid("The response's notification.apnsId must be a UUID of the form 8-4-4-4-12 hexadecimal digits\(Self.found(notification["apnsId"])).")
        }
        guard let payloadValue = notification["payload"] else {
            throw Self.invalid("The response's notification has no payload (the notification's payload as delivered).")
        }
        do throws(PayloadError) {
            payload = try Payload(validating: payloadValue)
        } catch {
            throw Self.invalid("The response's notification.payload is not a valid payload: \(error.message)")
        }
        self.notificationID = notificationID

        switch (Self.present(object["actionIdentifier"]), Self.present(object["mediaCommand"])) {
        case (.some, .some):
            throw Self.invalid("The response must have one of actionIdentifier and mediaCommand, but it has both.")
        case (.none, .none):
            throw Self.invalid("The response must have one of actionIdentifier and mediaCommand, but it has neither.")
        case (.some(let identifier), .none):
            guard case .string(let text) = identifier, !text.isEmpty else {
                throw Self.invalid("The response's actionIdentifier must be a non-empty string\(Self.found(identifier)).")
            }
            action = ResponseAction(identifier: text)
        case (.none, .some(let command)):
            guard case .string(let text) = command, let mediaCommand = MediaCommand(rawValue: text) else {
                throw Self.invalid("The response's mediaCommand must be play or pause\(Self.found(command)).")
            }
            action = .media(mediaCommand)
        }

        switch Self.present(object["userText"]) {
        case .none:
            userText = nil
        case .string(let text)?:
            guard action.mediaCommand == nil else {
                throw Self.invalid("The response's userText belongs to an actionIdentifier (a text-input action), not to a mediaCommand.")
            }
            userText = text
        case let other?:
            throw Self.invalid("The response's userText must be a string\(Self.found(other)).")
        }
    }

    /// The value, nil when absent or JSON null (optional keys may be written as null).
    private static func present(_ value: JSONValue?) -> JSONValue? {
        guard let value, !value.isNull else { return nil }
        return value
    }

    /// `, but it is the <type> <value>`, or `, but it is missing`.
    private static func found(_ value: JSONValue?) -> String {
        guard let value else { return ", but it is missing" }
        return ", but it is the \(value.typeName) \(MessageText.quote(value))"
    }

    private static func rejectUnknownKeys(_ object: JSONObject, allowed: [String], in subject: String) throws(Rejection) {
        for key in object.keys where !allowed.contains(key) {
            throw invalid("\(subject) has the unknown key \(MessageText.quote(key)); its keys are \(allowed.joined(separator: ", ")).")
        }
    }

    private static func invalid(_ detail: String) -> Rejection {
        Rejection(.invalidResponse, detail)
    }
}
