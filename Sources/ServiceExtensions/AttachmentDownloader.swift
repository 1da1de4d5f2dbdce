import Foundation
import NIOCore
import Synchronization
import WebhookHTTP

/// Fetches one media URL hop by hop: every hop's destination is checked before connecting and the
/// connection is pinned to the checked address; the body is streamed into the store through a
/// buffer of fixed size (`MediaBodyWriter`) and abandoned as soon as it passes its kind's limit.
struct AttachmentDownloader: Sendable {
    /// The most redirects followed.
    static let maxRedirects = 5

    /// The shared client (its event loops, connect timeout and TLS settings): each hop is a
    /// connection of its own.
    let client: WebhookHTTPClient
    /// The safety check of every hop.
    let check: DestinationCheck
    /// The size limit of each kind.
    let maxBytes: [MediaKind: Int]
    /// Where the file goes.
    let store: AttachmentStore

    /// Downloads `url` into the store before `deadline`.
    /// - Throws: `AttachmentError` for every refusal and failure; `CancellationError` when
    ///   cancelled. No partial file is left behind either way.
    func download(_ url: URL, deadline: ContinuousClock.Instant) async throws -> StoredMedia {
        var current = url
        var redirects = 0
        while true {
            let destination = try await check.check(current)
            switch try await fetch(destination, deadline: deadline) {
            case .media(let media):
                return media
            case .redirect(let location):
                redirects += 1
                guard redirects <= Self.maxRedirects else { throw AttachmentError.tooManyRedirects(Self.maxRedirects) }
                guard let next = URL(string: location, relativeTo: current)?.absoluteURL else {
                    throw AttachmentError.badRedirect("the Location header is not a URL")
                }
                current = next
            }
        }
    }

    /// What one hop came to.
    enum Hop {
        case media(StoredMedia)
        case redirect(location: String)
    }

    /// One request to `destination`, on a connection of its own to a checked address (the
    /// addresses tried in order until one connects), following no redirect.
    func fetch(_ destination: DestinationCheck.Destination, deadline: ContinuousClock.Instant) async throws -> Hop {
        var lastFailure: (any Error)?
        for address in destination.addresses {
            do {
                return try await fetch(destination, at: address, deadline: deadline)
            } catch let failure as ConnectFailure {
                lastFailure = failure.error
            }
        }
        throw AttachmentError.transfer("cannot connect to \(destination.host): \(lastFailure.map { String(describing: $0) } ?? "no address")")
    }

    /// The request failed before any response arrived: the next checked address may do better.
    private struct ConnectFailure: Error {
        let error: any Error
    }

    /// One request to `destination` through `address`, before `deadline`.
    ///
    /// The connection goes to the address checked while the Host header, TLS server name and
    /// certificate check keep the URL's host: a second DNS answer cannot redirect it. The whole
    /// hop races a timer, and whichever ends first cancels the other: a cancelled hop closes its
    /// connection, and a body cut off leaves no file.
    private func fetch(
        _ destination: DestinationCheck.Destination, at address: IPAddress, deadline: ContinuousClock.Instant
    ) async throws -> Hop {
        let url = destination.url
        let usesTLS = url.scheme?.lowercased() == "https"
        let port = url.port ?? (usesTLS ? 443 : 80)
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let query = components?.percentEncodedQuery.map { "?\($0)" } ?? ""
        let request = StreamedGet(
            usesTLS: usesTLS, host: destination.host, port: port, target: (components?.percentEncodedPath ?? "/") + query,
            address: try SocketAddress(ipAddress: address.description, port: port),
            headers: [("Accept", "image/*, audio/*, video/*")])
        let progress = HopProgress()
        return try await withThrowingTaskGroup(of: Hop?.self) { group in
            group.addTask { try await self.fetch(request, progress: progress) }
            group.addTask {
                // Cancelled from outside (the chain's deadline), the timer throws: no time limit passed.
                try await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let hop = first else {
                throw AttachmentError.transfer(
                    progress.headArrived ? "the body did not arrive before the time limit" : "no response before the time limit")
            }
            return hop
        }
    }

    /// Whether a hop's response head has arrived, for the time limit's message.
    private final class HopProgress: Sendable {
        private let arrived = Atomic<Bool>(false)
        var headArrived: Bool { arrived.load(ordering: .relaxed) }
        func headDidArrive() { arrived.store(true, ordering: .relaxed) }
    }

    private func fetch(_ request: StreamedGet, progress: HopProgress) async throws -> Hop {
        do {
            return try await client.withResponse(to: request) { response in
                progress.headDidArrive()
                return try await read(&response)
            }
        } catch let error as WebhookHTTPError {
            try Task.checkCancellation()
            throw ConnectFailure(error: error)
        } catch let error as InvalidWebhookRequest {
            throw AttachmentError.transfer(error.description)
        }
    }

    /// What a response comes to: its body as the file, a redirect, or a refused status.
    private func read(_ response: inout StreamedResponse) async throws -> Hop {
        switch response.status {
        case 200:
            return .media(try await readBody(&response))
        case 301, 302, 303, 307, 308:
            guard let location = response.header("Location"), !location.isEmpty else {
                throw AttachmentError.badRedirect("status \(response.status) without Location")
            }
            return .redirect(location: location)
        default:
            throw AttachmentError.status(response.status)
        }
    }

    /// Reads the body of `response` into the store, deciding its format from the first bytes and
    /// stopping as soon as it passes the limit (before that, from `Content-Length`, when the
    /// server announces more). Whatever ends the read early removes the partial file.
    private func readBody(_ response: inout StreamedResponse) async throws -> StoredMedia {
        let declared = ContentTypeHeader(response.header("Content-Type"))
        if case .other(let type) = declared { throw AttachmentError.contentTypeNotMedia(type) }
        if let announced = response.header("Content-Length").flatMap({ Int($0) }) {
            let (kind, limit) = MediaBodyWriter.limit(of: declared.kind, in: maxBytes)
            if announced > limit { throw AttachmentError.tooLarge(kind: kind, limit: limit, read: 0) }
        }
        var body = MediaBodyWriter(declared: declared.kind, maxBytes: maxBytes, store: store)
        do {
            // Leaving the loop by throwing closes the connection (`withResponse`).
            while let chunk = try await response.nextChunk() {
                try await body.append(chunk)
            }
            // A body cut off by cancellation is not a file, however its stream reported the end.
            try Task.checkCancellation()
            return try await body.finish()
        } catch let error as WebhookHTTPError {
            await body.abandon()
            throw AttachmentError.transfer(error.message)
        } catch {
            // Cancellation included: the abandoned file is removed before the task ends.
            await body.abandon()
            throw error
        }
    }
}
