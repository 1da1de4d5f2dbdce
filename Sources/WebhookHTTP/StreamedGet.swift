public import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// One GET on a connection of its own, made to an address the caller chose, whose response body
/// is read as it arrives: what an attachment download needs and a webhook call does not.
///
/// The pooled calls connect to whatever their host resolves to and collect their response; a
/// download connects to the one address its safety check judged (a second DNS answer must not
/// move it) and streams a body of megabytes through a buffer of fixed size. The connection reads
/// no faster than the caller takes the body: NIO's asynchronous channel asks the socket for more
/// only while fewer than a few chunks wait, so a reader that stops holds the socket's buffers, not
/// the body.
public struct StreamedGet: Sendable {
    /// Whether the connection uses TLS (`https`).
    public var usesTLS: Bool
    /// The host as the URL names it (no IPv6 brackets): the `Host` header, and TLS's server name
    /// and certificate check when it is a name.
    public var host: String
    /// The port of the `Host` header and of the connection.
    public var port: Int
    /// The request target: the URL's percent-encoded path and query (`/` when the path is empty).
    public var target: String
    /// The address the connection goes to (the host's checked address).
    public var address: SocketAddress
    /// More request headers (`Host` and `Connection: close` are always sent).
    public var headers: [(String, String)]

    /// A GET of `target` from `host`, connecting to `address`.
    public init(usesTLS: Bool, host: String, port: Int, target: String, address: SocketAddress, headers: [(String, String)] = []) {
        self.usesTLS = usesTLS
        self.host = host
        self.port = port
        self.target = target.isEmpty ? "/" : target
        self.address = address
        self.headers = headers
    }

    /// Scheme, host and port, as a webhook's endpoint names them.
    var endpoint: WebhookEndpoint { WebhookEndpoint(usesTLS: usesTLS, host: host, port: port) }

    /// The `Host` header: the port only when it is not the scheme's default, an IPv6 address in brackets.
    var hostHeader: String {
        port == (usesTLS ? 443 : 80) ? endpoint.bracketedHost : "\(endpoint.bracketedHost):\(port)"
    }
}

/// A response whose head has arrived and whose body is read chunk by chunk.
public struct StreamedResponse {
    /// The status code.
    public let status: Int
    private let headers: HTTPHeaders
    private var parts: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    private var ended = false

    init(head: HTTPResponseHead, parts: NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator) {
        status = Int(head.status.code)
        headers = head.headers
        self.parts = parts
    }

    /// The first value of the header `name` (case-insensitive), nil when absent.
    public func header(_ name: String) -> String? {
        headers.first(name: name)
    }

    /// The body's next chunk, nil once it ended.
    /// - Throws: ``WebhookHTTPError`` (``WebhookHTTPError/Code/connectionClosed``) when the
    ///   connection closes before the body's end; `CancellationError` when the task is cancelled.
    public mutating func nextChunk() async throws -> ByteBuffer? {
        while !ended {
            let part: HTTPClientResponsePart?
            do {
                part = try await parts.next()
            } catch {
                try Task.checkCancellation()
                throw WebhookHTTPError(.connectionClosed, "the connection failed mid-body: \(error)")
            }
            switch part {
            case .body(let chunk):
                return chunk
            case .end:
                ended = true
            case .head:
                // An informational response's successor cannot come mid-body: a broken response.
                throw WebhookHTTPError(.invalidResponse, "a second response head arrived mid-body")
            case nil:
                try Task.checkCancellation()
                throw WebhookHTTPError(.connectionClosed, "the connection closed before the body's end")
            }
        }
        return nil
    }
}

extension WebhookHTTPClient {
    /// Makes `request` on a connection of its own, hands the response to `body` once its head has
    /// arrived, and closes the connection when `body` returns or throws (a body not read to its
    /// end is abandoned with the connection, never drained).
    ///
    /// Connecting takes at most the client's connect timeout and uses its TLS settings. The call
    /// has no deadline of its own: the caller bounds it, and cancelling the task closes the
    /// connection at once, whatever it was waiting for.
    /// - Throws: ``InvalidWebhookRequest`` when the TLS settings cannot be loaded; before `body`
    ///   runs, `WebhookHTTPError` (`connectFailed`, `connectTimeout`, or `connectionClosed` when
    ///   no response head came back); then whatever `body` throws; `CancellationError` when cancelled.
    public func withResponse<Result>(
        to request: StreamedGet, _ body: (inout StreamedResponse) async throws -> Result
    ) async throws -> Result {
        let tls = request.usesTLS ? try tlsContextMadeOnce() : nil
        let serverName = request.endpoint.hostIsAddress ? nil : request.host
        let timeout = TimeAmount(configuration.connectTimeout)
        let channel: NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>
        // NIO's connect does not end when its task is cancelled: a host that drops the SYN would
        // hold a cancelled GET for the whole connect timeout. Cancellation closes the channel
        // being connected, which fails the connect at once.
        let connecting = ConnectingChannel()
        do {
            channel = try await withTaskCancellationHandler {
                try await ClientBootstrap(group: group)
                    .connectTimeout(timeout)
                    .connect(to: request.address) { channel in
                        guard connecting.began(channel) else { return channel.eventLoop.makeFailedFuture(CancellationError()) }
                        return channel.eventLoop.makeCompletedFuture {
                            let operations = channel.pipeline.syncOperations
                            if let tls {
                                try operations.addHandler(NIOSSLClientHandler(context: tls, serverHostname: serverName))
                            }
                            try operations.addHTTPClientHandlers()
                            return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                        }
                    }
            } onCancel: {
                connecting.cancel()
            }
        } catch {
            try Task.checkCancellation()
            let endpoint = WebhookEndpoint(usesTLS: request.usesTLS, host: request.address.ipAddress ?? request.host, port: request.port)
            throw ConnectionPool.connectError(error, endpoint: endpoint, timeout: timeout)
        }
        // Cancellation closes the connection, which ends whatever read or write is waiting.
        return try await withTaskCancellationHandler {
            try await channel.executeThenClose { inbound, outbound in
                var head = HTTPRequestHead(version: .http1_1, method: .GET, uri: request.target)
                head.headers.add(name: "Host", value: request.hostHeader)
                for (name, value) in request.headers { head.headers.add(name: name, value: value) }
                head.headers.add(name: "Connection", value: "close")
                var parts = inbound.makeAsyncIterator()
                do {
                    try await outbound.write(.head(head))
                    try await outbound.write(.end(nil))
                } catch {
                    try Task.checkCancellation()
                    throw WebhookHTTPError(.connectionClosed, "the request could not be sent to \(request.host): \(error)")
                }
                let responseHead: HTTPResponseHead
                do {
                    responseHead = try await Self.finalHead(from: &parts)
                } catch let error as WebhookHTTPError {
                    throw error
                } catch {
                    try Task.checkCancellation()
                    throw WebhookHTTPError(.connectionClosed, "no response from \(request.host): \(error)")
                }
                var response = StreamedResponse(head: responseHead, parts: parts)
                return try await body(&response)
            }
        } onCancel: {
            channel.channel.close(promise: nil)
        }
    }

    /// The response's head, past any informational (1xx) ones.
    private static func finalHead(
        from parts: inout NIOAsyncChannelInboundStream<HTTPClientResponsePart>.AsyncIterator
    ) async throws -> HTTPResponseHead {
        while true {
            switch try await parts.next() {
            case .head(let head) where head.status.code >= 200:
                return head
            case .head:
                continue
            case .body, .end:
                throw WebhookHTTPError(.invalidResponse, "a response body came before its head")
            case nil:
                try Task.checkCancellation()
                throw WebhookHTTPError(.connectionClosed, "the connection closed before a response arrived")
            }
        }
    }
}

/// The channel of a connection being made, so that cancelling its GET closes it mid-connect.
private final class ConnectingChannel: Sendable {
    private let state = Mutex<(channel: (any Channel)?, cancelled: Bool)>((nil, false))

    /// Records `channel` as the one being connected; false when the GET was cancelled already.
    func began(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.cancelled else { return false }
            state.channel = channel
            return true
        }
    }

    /// Closes the channel being connected, if any, and refuses one that comes later.
    func cancel() {
        let channel = state.withLock { state -> (any Channel)? in
            state.cancelled = true
            return state.channel
        }
        channel?.close(promise: nil)
    }
}
