import AsyncHTTPClient
import Dispatcher
import Foundation
import JSON
import NIOCore
import NIOHTTP1
import Notifications
import Records

/// The built-in `webhook` kind: POSTs the request to `url` and takes the answer as the new content.
struct WebhookExtension: ServiceExtension {
    /// The shared, pooled clients (owned and shut down by whoever built the registry).
    let clients: WebhookClients
    /// The POST to `url` with the configured headers, without its body: the URL is parsed and
    /// the headers are built once, not per call.
    let template: HTTPClient.Request
    /// The largest response body accepted.
    let maxResponseBytes: Int

    /// How much later than the deadline the client's own timeout fires.
    static let timeoutMargin: Duration = .seconds(1)

    /// Checks `options`: `url` (http or https) and `headers` (a mapping of strings).
    init(options: ExtensionOptions, clients: WebhookClients, maxResponseBytes: Int) throws(ExtensionOptionsError) {
        try options.rejectUnknownKeys(allowed: ["url", "headers"])
        let url = try options.string("url")
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
            parsed.host != nil
        else {
            throw ExtensionOptionsError(key: "url", value: url, "expected an http or https URL")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: "application/json")
        for (name, value) in try options.optionalObject("headers") ?? JSONObject() {
            guard let text = value.stringValue else {
                throw ExtensionOptionsError(key: "headers", value: value.compactText, "header \(name) must be a string")
            }
            headers.add(name: name, value: text)
        }
        do {
            template = try HTTPClient.Request(url: url, method: .POST, headers: headers)
        } catch {
            throw ExtensionOptionsError(key: "url", value: url, "not a URL the HTTP client can call (\(error))")
        }
        self.clients = clients
        self.maxResponseBytes = maxResponseBytes
    }

    /// POSTs the request and turns the answer into content (200), unchanged content (204) or a failure.
    ///
    /// The call goes through AsyncHTTPClient's future-based API, awaited once. Its `async`
    /// `execute` keeps a chain of about ten async frames alive for the whole call, each taking
    /// a slab of about a kilobyte from the task's allocator: with `dispatch.maxInFlight` calls
    /// waiting on a slow webhook that was over half the worker's memory (docs/performance.md),
    /// where the future-based call keeps its state in a few heap objects.
    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        let task = try start(request)
        let response = try await withTaskCancellationHandler {
            try await task.futureResult.get()
        } onCancel: {
            task.cancel()
        }
        return try Self.content(of: response, entering: request.content)
    }

    /// Starts the POST; out of line, so that building it takes no room in `didReceive`'s frame.
    @inline(never)
    private func start(_ request: ServiceExtensionRequest) throws -> HTTPClient.Task<HTTPClient.Response> {
        guard request.deadline > .now else { throw WebhookError.deadlinePassed }
        var call = template
        call.body = .byteBuffer(ByteBuffer(bytes: JSONValue.object(Self.body(of: request)).serialized()))
        // The dispatcher cancels the call and stops waiting at the deadline; the client's own
        // deadline is only a backstop, a little later, so it never races the dispatcher's.
        return clients.nextClient().execute(
            request: call, delegate: ResponseAccumulator(request: call, maxBodySize: maxResponseBytes),
            deadline: .at(request.deadline + Self.timeoutMargin))
    }

    /// The new content (200), the content unchanged (204), or the failure (any other status).
    static func content(of response: HTTPClient.Response, entering: NotificationContent) throws(WebhookError) -> NotificationContent {
        switch response.status.code {
        case 200: try content(from: response.body.map { Array($0.readableBytesView) } ?? [], entering: entering)
        case 204: entering
        default: throw WebhookError.status(Int(response.status.code))
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
            ("apnsId", .string(notification.apnsID)),
            ("deviceToken", .string(notification.deviceToken)),
            ("bundleId", .string(notification.bundleID)),
            ("category", request.category.map(JSONValue.string) ?? .null),
            ("pushType", .string(notification.pushType.rawValue)),
            ("headers", .object(headers)),
            ("payload", .object(request.content.payload)),
        ])
    }

    /// The new content of a 200 body; the attachments it adds follow those already there.
    static func content(from body: [UInt8], entering: NotificationContent) throws(WebhookError) -> NotificationContent {
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
