import Dispatcher
import JSON
import NIOCore
import Notifications
import Records
import WebhookHTTP

/// The built-in `webhook` kind: POSTs the request to `url` and takes the answer as the new content.
struct WebhookExtension: ServiceExtension {
    /// The POST to `url` with the configured headers, serialised once (not per call), and the
    /// shared client's pool for its endpoint.
    let target: WebhookTarget
    /// The largest response body accepted.
    let maxResponseBytes: Int

    /// How much later than the deadline the client's own timeout fires.
    static let timeoutMargin: Duration = .seconds(1)

    /// Checks `options`: `url` (http or https) and `headers` (a mapping of strings).
    init(options: ExtensionOptions, client: WebhookHTTPClient, maxResponseBytes: Int) throws(ExtensionOptionsError) {
        try options.rejectUnknownKeys(allowed: ["url", "headers"])
        let url = try options.string("url")
        var headers: [(name: String, value: String)] = []
        for (name, value) in try options.optionalObject("headers") ?? JSONObject() {
            guard let text = value.stringValue else {
                throw ExtensionOptionsError(key: "headers", value: value.compactText, "header \(name) must be a string")
            }
            headers.append((name, text))
        }
        do throws(InvalidWebhookRequest) {
            target = try client.target(WebhookRequestTemplate(url: url, headers: headers))
        } catch {
            switch error.part {
            case .url, .tls: throw ExtensionOptionsError(key: "url", value: url, error.description)
            case .headers: throw ExtensionOptionsError(key: "headers", value: nil, error.description)
            }
        }
        self.maxResponseBytes = maxResponseBytes
    }

    /// POSTs the request and turns the answer into content (200), unchanged content (204) or a failure.
    ///
    /// The call is one continuation, resumed by the client's event loop (``WebhookTarget/post(_:backstop:maxResponseBytes:)``);
    /// cancelling the task (the dispatcher does at the deadline) fails it and closes its connection.
    ///
    /// The body read counts towards the chain's memory (SEMANTICS section 22): the client reads
    /// at most what the chain may still hold (or `maxResponseBytes`, when that is less), and stops
    /// reading as soon as a body passes it. A body past the chain's memory stops the chain
    /// (`extension-memory-limit`); one past `maxResponseBytes` alone fails the step, as before.
    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        guard request.deadline > .now else { throw WebhookError.deadlinePassed }
        let memory = request.memory
        // Read before the call: nothing else of this step holds memory while it waits.
        let memoryCap = memory.available
        let response: WebhookResponse
        do {
            // The dispatcher cancels the call and stops waiting at the deadline; the client's own
            // deadline is only a backstop, a little later, so it never races the dispatcher's.
            response = try await target.post(
                Self.serializedBody(of: request), backstop: .at(request.deadline + Self.timeoutMargin),
                maxResponseBytes: min(maxResponseBytes, memoryCap))
        } catch {
            if error.code == .responseTooLarge, memoryCap < maxResponseBytes {
                // Past what the chain may hold: declared, it stops the chain (and throws).
                try memory.hold(error.bodyBytes ?? memoryCap + 1)
            }
            throw WebhookError.transport(error)
        }
        // Held while it is parsed; released when the step ends (the new content is measured then).
        try memory.hold(response.body.readableBytes)
        return try Self.content(of: response, entering: request.content)
    }

    /// The body's bytes; out of line, so that building them takes no room in `didReceive`'s frame.
    @inline(never)
    private static func serializedBody(of request: ServiceExtensionRequest) -> [UInt8] {
        JSONValue.object(body(of: request)).serialized()
    }

    /// The new content (200), the content unchanged (204), or the failure (any other status).
    static func content(of response: WebhookResponse, entering: NotificationContent) throws(WebhookError) -> NotificationContent {
        switch response.status {
        case 200: try content(from: response.body.readableBytesView, entering: entering)
        case 204: entering
        default: throw WebhookError.status(response.status)
        }
    }

    /// The JSON object POSTed for `request`.
    static func body(of request: ServiceExtensionRequest) -> JSONObject {
        let notification = request.notification
        var headers = JSONObject()
        for header in notification.headers {
            headers[header.name] = header.value.map { .string(String(decoding: $0, as: UTF8.self)) } ?? .null
        }
        return JSONObject([
            ("apnsId", .string(notification.apnsID.description)),
            ("deviceToken", .string(notification.deviceToken)),
            ("bundleId", .string(notification.bundleID)),
            ("category", request.category.map(JSONValue.string) ?? .null),
            ("pushType", .string(notification.pushType.rawValue)),
            ("headers", .object(headers)),
            ("payload", .object(request.content.payload)),
        ])
    }

    /// The new content of a 200 body; the attachments it adds follow those already there.
    static func content(from body: some Collection<UInt8>, entering: NotificationContent) throws(WebhookError) -> NotificationContent {
        let parsed: JSONValue
        do {
            parsed = try JSONValue(parsing: body)
        } catch {
            throw WebhookError.invalidBody("not JSON (\(error))")
        }
        guard let object = parsed.objectValue else { throw WebhookError.invalidBody("not a JSON object") }
        for key in object.keys where key != "payload" && key != "attachments" {
            throw WebhookError.invalidBody("unknown key \(key); expected payload and optionally attachments")
        }
        guard let payload = object["payload"]?.objectValue else {
            throw WebhookError.invalidBody("payload is missing or not an object")
        }
        var attachments = entering.attachments
        if let added = object["attachments"] {
            guard let list = added.arrayValue else { throw WebhookError.invalidBody("attachments is not a list") }
            for element in list {
                guard let attachment = element.objectValue else {
                    throw WebhookError.invalidBody("an attachment is not an object")
                }
                attachments.append(attachment)
            }
        }
        return NotificationContent(payload: payload, attachments: attachments)
    }
}
