import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// The kept-alive connections to one endpoint, at most `connectionsPerHost` of them; calls beyond
/// that wait, in order, for one to be free.
///
/// Each call costs the pool one lock, held for an O(1) transition of ``ConnectionPoolState``
/// (never a scan of the connections), and one hop to the connection's event loop.
final class ConnectionPool: Sendable {
    /// Where the connections go.
    let endpoint: WebhookEndpoint
    private let group: any EventLoopGroup
    private let connectTimeout: TimeAmount
    private let idleTimeout: TimeAmount
    /// For https endpoints: the client's TLS settings.
    private let tls: NIOSSLContext?
    /// The endpoint's address when its host is one: connected to directly, without a lookup.
    private let literalAddress: SocketAddress?
    private let state: Mutex<ConnectionPoolState<PooledConnection, WebhookCall>>
    /// Every connection open (idle or busy), so that shutting down closes them all.
    private let open = Mutex<[ObjectIdentifier: PooledConnection]>([:])

    init(endpoint: WebhookEndpoint, group: any EventLoopGroup, configuration: WebhookHTTPClient.Configuration, tls: NIOSSLContext?) {
        self.endpoint = endpoint
        self.group = group
        connectTimeout = TimeAmount(configuration.connectTimeout)
        idleTimeout = TimeAmount(configuration.idleTimeout)
        self.tls = tls
        literalAddress = try? SocketAddress(ipAddress: endpoint.host, port: endpoint.port)
        state = Mutex(ConnectionPoolState(limit: configuration.connectionsPerHost))
    }

    /// Runs `call` on an idle connection, on a new one, or once one is free.
    /// - Parameter preferNew: open a new connection if the limit allows (a call sent again after
    ///   a reused connection turned out dead: other idle ones may be just as dead).
    func execute(_ call: WebhookCall, preferNew: Bool = false) {
        switch state.withLock({ $0.acquire(call, preferNew: preferNew) }) {
        case .use(let connection):
            connection.run(call)
        case .connect:
            connect(for: call)
        case .wait:
            // The caller cancels at its deadline; this is the backstop should it not. Waiting is
            // rare (only beyond `connectionsPerHost`), so a timer each is affordable here.
            group.next().scheduleTask(deadline: call.backstop) {
                call.finish(.failure(WebhookHTTPError(.timedOut, "no connection to the webhook became free before the client's deadline")))
            }
        case .shutDown:
            call.finish(.failure(Self.shutDownError))
        }
    }

    /// `connection` is free for the next call. Runs on its event loop.
    func release(_ connection: PooledConnection) {
        perform(state.withLock { $0.release(connection) })
    }

    /// `connection` closed. Runs on its event loop.
    func closed(_ connection: PooledConnection) {
        _ = open.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
        perform(state.withLock { $0.closed(connection) })
    }

    /// Closes every connection and fails every waiting call; calls arriving later fail at once.
    func shutdown() async {
        let (_, waiters) = state.withLock { $0.shutDown() }
        for waiter in waiters { waiter.finish(.failure(Self.shutDownError)) }
        let connections = open.withLock { Array($0.values) }
        for connection in connections { connection.close(failing: Self.shutDownError) }
        for connection in connections { try? await connection.channel.closeFuture.get() }
    }

    private func perform(_ freed: ConnectionPoolState<PooledConnection, WebhookCall>.Freed) {
        switch freed {
        case .none: break
        case .use(let connection, let call): connection.run(call)
        case .connect(let call): connect(for: call)
        }
    }

    /// Opens a connection for `call` (its slot is counted). A failure fails the call: connection
    /// establishment is never retried, so a refused connection fails the step at once.
    private func connect(for call: WebhookCall) {
        let remaining = call.backstop - .now()
        guard remaining > .zero else {
            connectFailed(call, WebhookHTTPError(.timedOut, "the client's deadline passed before a connection to the webhook was made"))
            return
        }
        let timeout = min(connectTimeout, remaining)
        let endpoint = self.endpoint
        let tls = self.tls
        let idleTimeout = self.idleTimeout
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(timeout)
            .channelInitializer { [self] channel in
                channel.eventLoop.makeCompletedFuture {
                    let operations = channel.pipeline.syncOperations
                    if let tls {
                        // An IP address is not a server name: NIOSSL then checks the certificate
                        // against the address connected to.
                        try operations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: endpoint.hostIsAddress ? nil : endpoint.host))
                    }
                    try operations.addHandler(RawRequestWriter())
                    try operations.addHandler(ByteToMessageHandler(HTTPResponseDecoder(leftOverBytesStrategy: .dropBytes)))
                    try operations.addHandler(WebhookConnectionHandler(pool: self, idleTimeout: idleTimeout))
                }
            }
        // A name is looked up (getaddrinfo, off the event loop) and its addresses tried by Happy
        // Eyeballs, for each new connection; an address needs neither.
        let connecting = literalAddress.map { bootstrap.connect(to: $0) } ?? bootstrap.connect(host: endpoint.host, port: endpoint.port)
        connecting.whenComplete { [self] result in
            switch result {
            case .success(let channel):
                connected(channel, for: call)
            case .failure(let error):
                connectFailed(call, Self.connectError(error, endpoint: endpoint, timeout: timeout))
            }
        }
    }

    /// Runs on `channel`'s event loop.
    private func connected(_ channel: any Channel, for call: WebhookCall) {
        let handler: WebhookConnectionHandler
        do {
            handler = try channel.pipeline.syncOperations.handler(type: WebhookConnectionHandler.self)
        } catch {
            channel.close(promise: nil)
            return connectFailed(call, WebhookHTTPError(.connectFailed, "the connection to \(endpoint) was set up wrongly: \(error)"))
        }
        let connection = PooledConnection(channel: channel, handler: NIOLoopBound(handler, eventLoop: channel.eventLoop))
        if let failure = handler.attach(connection) {
            return connectFailed(call, failure)
        }
        open.withLock { $0[ObjectIdentifier(connection)] = connection }
        if state.withLock({ $0.isShutDown }) {
            // Shut down while connecting: ``shutdown()`` did not see this connection.
            call.finish(.failure(Self.shutDownError))
            channel.close(promise: nil)
            return
        }
        handler.start(call)
    }

    private func connectFailed(_ call: WebhookCall, _ error: WebhookHTTPError) {
        call.finish(.failure(error))
        perform(state.withLock { $0.connectFailed() })
    }

    private static let shutDownError = WebhookHTTPError(.shutDown, "the webhook client is shut down")

    /// What a failure to connect means, for people.
    static func connectError(_ error: any Error, endpoint: WebhookEndpoint, timeout: TimeAmount) -> WebhookHTTPError {
        func isTimeout(_ error: any Error) -> Bool {
            if case ChannelError.connectTimeout = error { true } else { false }
        }
        // One address timed out, or every address a name resolved to did (Happy Eyeballs).
        let timedOut =
            if let error = error as? NIOConnectionError {
                !error.connectionErrors.isEmpty && error.connectionErrors.allSatisfy { isTimeout($0.error) }
            } else {
                isTimeout(error)
            }
        if timedOut {
            return WebhookHTTPError(.connectTimeout, "no connection to \(endpoint) within \(timeout.nanoseconds / 1_000_000) ms")
        }
        return WebhookHTTPError(.connectFailed, "cannot connect to \(endpoint): \(error)")
    }
}
