public import NIOCore
public import NIOPosix
public import NIOSSL
import Synchronization

/// A lean HTTP/1.1 client for webhook calls: POSTs of small JSON bodies over kept-alive
/// connections, pooled per endpoint (scheme, host, port). Attachment downloads use it too, for
/// GETs on connections of their own (``withResponse(to:_:)``).
///
/// Per call it does little: the request's head is serialised once per step
/// (``WebhookRequestTemplate``) and the call writes one buffer; the response is read by NIO's
/// HTTP/1.1 decoder and accumulated up to the call's cap; the result comes back through one
/// continuation. No task, future chain or pipeline is made per call, and the pool's bookkeeping
/// is O(1) per call, so one pool serves 10,000 connections.
///
/// What it does not do: follow redirects (a 3xx is a status like any other), retry connection
/// establishment (a refused connection fails the call at once), or speak HTTP/2.
public final class WebhookHTTPClient: Sendable {
    /// How the client connects and how long connections live.
    public struct Configuration: Sendable {
        /// The longest a connection may take to be made (the call's backstop bounds it too).
        public var connectTimeout: Duration = .seconds(10)
        /// The most connections open to one endpoint at once; calls beyond wait for a free one.
        public var connectionsPerHost = 10_000
        /// How long an unused connection stays open.
        public var idleTimeout: Duration = .seconds(60)
        /// TLS for https endpoints: by default the system's trust roots, full certificate and
        /// host name verification.
        public var tls = TLSConfiguration.makeClientConfiguration()

        /// The defaults: 10 s to connect, 10,000 connections per endpoint, 60 s idle, system trust.
        public init() {}
    }

    let configuration: Configuration
    let group: any EventLoopGroup
    private let pools = Mutex<[WebhookEndpoint: ConnectionPool]>([:])
    /// Made on the first https target: loading the trust roots takes time an http-only
    /// configuration need not spend.
    private let tlsContext = Mutex<NIOSSLContext?>(nil)

    /// A client on `eventLoopGroup` (by default NIO's shared one). Shut it down with ``shutdown()``.
    public init(configuration: Configuration = Configuration(), eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        group = eventLoopGroup
    }

    /// The target for `template`'s requests: its endpoint's pool, made on first use. Call once
    /// per step, not per call.
    /// - Throws: ``InvalidWebhookRequest`` when the TLS settings cannot be loaded.
    package func target(_ template: WebhookRequestTemplate) throws(InvalidWebhookRequest) -> WebhookTarget {
        let tls = template.endpoint.usesTLS ? try tlsContextMadeOnce() : nil
        let pool = pools.withLock { pools in
            if let pool = pools[template.endpoint] { return pool }
            let pool = ConnectionPool(endpoint: template.endpoint, group: group, configuration: configuration, tls: tls)
            pools[template.endpoint] = pool
            return pool
        }
        return WebhookTarget(template: template, pool: pool)
    }

    /// Closes every connection and fails the calls waiting for one; later calls fail at once.
    public func shutdown() async {
        let pools = self.pools.withLock { Array($0.values) }
        for pool in pools { await pool.shutdown() }
    }

    func tlsContextMadeOnce() throws(InvalidWebhookRequest) -> NIOSSLContext {
        let result: Result<NIOSSLContext, InvalidWebhookRequest> = tlsContext.withLock { context in
            if let context { return .success(context) }
            do {
                let made = try NIOSSLContext(configuration: configuration.tls)
                context = made
                return .success(made)
            } catch {
                return .failure(InvalidWebhookRequest(.tls, "the TLS settings cannot be loaded: \(error)"))
            }
        }
        return try result.get()
    }
}

/// One step's requests: their template and their endpoint's pool.
package struct WebhookTarget: Sendable {
    /// The request without its body.
    package let template: WebhookRequestTemplate
    let pool: ConnectionPool

    /// POSTs `body` and returns the complete response (any status).
    ///
    /// Cancelling the task fails the call at once with ``WebhookHTTPError/Code/cancelled`` and
    /// closes its connection if the request was written (never reused mid-response).
    /// - Parameters:
    ///   - backstop: the client's own deadline: the call fails with
    ///     ``WebhookHTTPError/Code/timedOut`` then, whatever it was doing.
    ///   - maxResponseBytes: the largest body accepted; a larger one fails the call.
    package func post(
        _ body: some Collection<UInt8>, backstop: NIODeadline, maxResponseBytes: Int
    ) async throws(WebhookHTTPError) -> WebhookResponse {
        let call = WebhookCall(request: template.request(body: body), template: template, backstop: backstop, maxResponseBytes: maxResponseBytes)
        do {
            return try await withTaskCancellationHandler {
                try await WebhookCall.suspend { continuation in
                    if call.begin(continuation) { pool.execute(call) }
                }
            } onCancel: {
                call.cancel()
            }
        } catch let error as WebhookHTTPError {
            throw error
        } catch {
            throw WebhookHTTPError(.connectionClosed, "the webhook call failed: \(error)")
        }
    }
}
