import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Fetches one media URL hop by hop: every hop's destination is checked before connecting and the
/// connection is pinned to the checked address; the body is streamed into the store through a
/// buffer of fixed size (`MediaBodyWriter`) and abandoned as soon as it passes its kind's limit.
struct AttachmentDownloader: Sendable {
    /// The most redirects followed (as many as AsyncHTTPClient's default).
    static let maxRedirects = 5

    /// The shared client, whose event loops the per-hop clients use.
    let client: HTTPClient
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

    /// One request to `destination`, through a client of its own that follows no redirect and
    /// connects to a checked address only, trying them in order until one connects.
    ///
    /// The shared client cannot do either per request (both are client-wide settings), so each
    /// attempt gets a short-lived client on the shared client's event loops: no threads are
    /// created, only a connection pool, which is shut down when the attempt ends.
    func fetch(_ destination: DestinationCheck.Destination, deadline: ContinuousClock.Instant) async throws -> Hop {
        var lastFailure: (any Error)?
        for address in destination.addresses {
            // The shared client's settings: no redirect following, a short connect timeout (the
            // next checked address is tried when one cannot be reached).
            var configuration = BuiltInExtensions.httpClientConfiguration()
            if destination.hostIsName {
                // The connection goes to the address checked above while the Host header, TLS server
                // name and certificate check keep the name: a second DNS answer cannot redirect it.
                // The override is looked up by the host as the client reads it from the URL, which
                // `URLHost` made sure is the name that was checked.
                configuration.dnsOverride[destination.host] = address.description
            }
            let hopClient = HTTPClient(eventLoopGroup: client.eventLoopGroup, configuration: configuration)
            do {
                let hop = try await fetch(destination.url, with: hopClient, deadline: deadline)
                try? await hopClient.shutdown()
                return hop
            } catch let failure as ConnectFailure {
                try? await hopClient.shutdown()
                lastFailure = failure.error
            } catch {
                try? await hopClient.shutdown()
                throw error
            }
        }
        throw AttachmentError.transfer("cannot connect to \(destination.host): \(lastFailure.map { String(describing: $0) } ?? "no address")")
    }

    /// The request failed before any response arrived: the next checked address may do better.
    private struct ConnectFailure: Error {
        let error: any Error
    }

    private func fetch(_ url: URL, with hopClient: HTTPClient, deadline: ContinuousClock.Instant) async throws -> Hop {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .GET
        request.headers.add(name: "Accept", value: "image/*, audio/*, video/*")
        let response: HTTPClientResponse
        do {
            response = try await hopClient.execute(request, deadline: NIODeadline.at(deadline))
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            throw AttachmentError.transfer("no response before the time limit")
        } catch let error as HTTPClientError where error == .cancelled {
            throw AttachmentError.transfer(String(describing: error))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw ConnectFailure(error: error)
        }
        switch response.status.code {
        case 200:
            return .media(try await read(response, until: deadline))
        case 301, 302, 303, 307, 308:
            guard let location = response.headers.first(name: "Location"), !location.isEmpty else {
                throw AttachmentError.badRedirect("status \(response.status.code) without Location")
            }
            return .redirect(location: location)
        default:
            throw AttachmentError.status(Int(response.status.code))
        }
    }

    /// Reads the body of `response` before `deadline`.
    ///
    /// AsyncHTTPClient's deadline ends with the response head, so a body trickling in after it is
    /// bounded here: the read races a timer, and whichever ends first cancels the other.
    private func read(_ response: HTTPClientResponse, until deadline: ContinuousClock.Instant) async throws -> StoredMedia {
        try await withThrowingTaskGroup(of: StoredMedia?.self) { group in
            group.addTask { try await self.read(response) }
            group.addTask {
                try? await Task.sleep(until: deadline, clock: .continuous)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let media = first else {
                throw AttachmentError.transfer("the body did not arrive before the time limit")
            }
            return media
        }
    }

    /// Reads the body of `response` into the store, deciding its format from the first bytes and
    /// stopping as soon as it passes the limit (before that, from `Content-Length`, when the
    /// server announces more). Whatever ends the read early removes the partial file.
    private func read(_ response: HTTPClientResponse) async throws -> StoredMedia {
        let declared = ContentTypeHeader(response.headers.first(name: "Content-Type"))
        if case .other(let type) = declared { throw AttachmentError.contentTypeNotMedia(type) }
        if let announced = response.headers.first(name: "Content-Length").flatMap({ Int($0) }) {
            let (kind, limit) = MediaBodyWriter.limit(of: declared.kind, in: maxBytes)
            if announced > limit { throw AttachmentError.tooLarge(kind: kind, limit: limit, read: 0) }
        }
        var body = MediaBodyWriter(declared: declared.kind, maxBytes: maxBytes, store: store)
        do {
            for try await chunk in response.body {
                // Leaving the loop by throwing drops the body stream, which closes the connection.
                try await body.append(chunk)
            }
            // A body cut off by cancellation is not a file, however its stream reported the end.
            try Task.checkCancellation()
            return try await body.finish()
        } catch let error as HTTPClientError {
            await body.abandon()
            throw AttachmentError.transfer(String(describing: error))
        } catch {
            // Cancellation included: the abandoned file is removed before the task ends.
            await body.abandon()
            throw error
        }
    }
}
