import Dispatcher
import Foundation
import JSON
import Notifications
import Synchronization
import WebhookHTTP

/// The built-in `attachment` kind (rich media): downloads the media the payload names, checks it,
/// stores it and adds it to the content's attachments.
///
/// One instance serves one notification: it keeps the content it was given so that, when time
/// runs out mid-download, it can hand that over as its best attempt.
struct AttachmentExtension: ServiceExtension {
    /// The checked options.
    let settings: AttachmentSettings
    /// The shared client (owned and shut down by whoever built the registry).
    let client: WebhookHTTPClient
    /// The store of `settings.store`, shared with the other steps that use its directory.
    let store: AttachmentStore
    /// The content this instance was given, once `didReceive` started.
    private let entering = EnteringContent()

    /// How long after the chain's deadline a download that ignored its cancellation is cut off.
    static let backstop: Duration = .seconds(5)

    /// An instance for one notification.
    init(settings: AttachmentSettings, client: WebhookHTTPClient, store: AttachmentStore) {
        self.settings = settings
        self.client = client
        self.store = store
    }

    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        entering.keep(request.content)
        guard let value = JSONValue.object(request.content.payload)[path: settings.urlPath.keys], !value.isNull else {
            return request.content
        }
        guard let text = value.stringValue, let url = URL(string: text), url.scheme != nil else {
            throw AttachmentError.invalidURL(place: "the value at \(settings.urlPath)")
        }
        let deadline: ContinuousClock.Instant
        if let timeout = settings.timeout, .now + timeout < request.deadline {
            deadline = .now + timeout
        } else {
            // The chain's deadline cancels this task first (the runner then asks for the best
            // attempt); the download's own limit must not race it and turn an expiry into a
            // failure. It is only the backstop for a cancelled download that does not stop.
            deadline = request.deadline + Self.backstop
        }
        // A download streams to the store: it holds its buffer, whatever the file's size
        // (SEMANTICS section 22), declared before it is allocated and released when the step ends.
        try request.memory.hold(MediaBodyWriter.bufferCapacity)
        let downloader = AttachmentDownloader(
            client: client, check: DestinationCheck(allowHosts: settings.allowHosts), maxBytes: settings.maxBytes,
            store: store)
        let media = try await downloader.download(url, deadline: deadline)
        var content = request.content
        content.attachments.append(
            JSONObject([
                ("identifier", .string(request.stepName)),
                ("url", .string(media.file.absoluteString)),
                ("type", .string(media.format.uniformTypeIdentifier)),
                ("size", .number(JSONNumber(media.size))),
                ("sha256", .string(media.sha256)),
            ]))
        return content
    }

    /// The content as it entered the step, without the attachment: the text changes of earlier
    /// steps survive when the download could not finish in time.
    func serviceExtensionTimeWillExpire() async -> NotificationContent? {
        entering.content
    }
}

/// The content an `AttachmentExtension` instance was given; read by the last-chance call, which
/// runs concurrently with the cancelled download.
private final class EnteringContent: Sendable {
    private let state = Mutex<NotificationContent?>(nil)

    /// Keeps `content`.
    func keep(_ content: NotificationContent) {
        state.withLock { $0 = content }
    }

    /// The kept content, nil before `didReceive` started.
    var content: NotificationContent? {
        state.withLock { $0 }
    }
}
