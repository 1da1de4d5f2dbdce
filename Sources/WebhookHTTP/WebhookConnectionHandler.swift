import NIOCore
import NIOHTTP1
import NIOSSL

/// Runs webhook calls, one after another, on one kept-alive connection: writes each request,
/// accumulates its response up to the call's cap, hands it back, and gives the connection back to
/// its pool, or closes it.
///
/// One timer per connection covers both the running call's backstop and the idle timeout. It is
/// rescheduled only when it fires early or a call's backstop comes before it, not per call: with
/// similar deadlines a busy connection sets about one timer per deadline, not one per call.
///
/// - Important: every method runs on the channel's event loop.
final class WebhookConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        /// Connected (or connecting); not yet in the pool.
        case starting
        /// In the pool since `since`.
        case idle(since: NIODeadline)
        /// `call`'s request is written; no response head yet. `reused`: the connection served a
        /// call before this one.
        case awaitingHead(WebhookCall, reused: Bool)
        /// `call`'s response head arrived; its body accumulates in ``body``.
        case receivingBody(WebhookCall)
        /// Closing or closed.
        case closed
    }

    private let pool: ConnectionPool
    private let idleTimeout: TimeAmount
    private var state = State.starting
    private var context: ChannelHandlerContext?
    /// The pool's handle on this connection; nil until connected, and again once closed (which
    /// ends the cycle between the two).
    private var connection: PooledConnection?
    private var callsStarted = 0
    /// The running response's status, whether the server keeps the connection open, its body.
    private var status = 0
    private var keepAlive = true
    private var body = ByteBuffer()
    /// Why the connection is being closed, for the call that runs on it.
    private var failure: WebhookHTTPError?
    private var timer: Scheduled<Void>?
    private var timerDeadline = NIODeadline.distantFuture

    init(pool: ConnectionPool, idleTimeout: TimeAmount) {
        self.pool = pool
        self.idleTimeout = idleTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    /// Makes `connection` the pool's handle on this channel; when the channel closed already (a
    /// TLS handshake can fail before the connection is handed over), why, and the connection
    /// never enters the pool.
    func attach(_ connection: PooledConnection) -> WebhookHTTPError? {
        guard case .starting = state else {
            return failure ?? WebhookHTTPError(.connectionClosed, "the connection closed as soon as it opened")
        }
        self.connection = connection
        return nil
    }

    /// Writes `call`'s request; sends a call back to the pool when the connection closed meanwhile
    /// (the request was never written), and gives the connection back when the call finished.
    func start(_ call: WebhookCall) {
        guard let connection, let context else {
            // Closed while the call was handed over: nothing was written, so it may wait for another.
            pool.execute(call)
            return
        }
        switch state {
        case .starting, .idle:
            break
        case .awaitingHead, .receivingBody, .closed:
            pool.execute(call)
            return
        }
        guard call.attach(to: connection) else {
            // Cancelled while it waited for this connection, which is free again.
            becomeIdle(connection)
            return
        }
        callsStarted += 1
        state = .awaitingHead(call, reused: callsStarted > 1)
        status = 0
        keepAlive = true
        body = ByteBuffer()
        context.write(wrapOutboundOut(.head(call.template.head)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(call.request))), promise: nil)
        arm(at: call.backstop)
    }

    /// Closes the connection if `call` still runs on it.
    func abandon(_ call: WebhookCall) {
        switch state {
        case .awaitingHead(let running, _) where running === call, .receivingBody(let running) where running === call:
            close(failing: WebhookHTTPError(.cancelled, "the webhook call was cancelled"))
        default:
            break
        }
    }

    /// Closes the connection; a call running on it fails with `error`.
    func close(failing error: WebhookHTTPError) {
        if failure == nil { failure = error }
        context?.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            guard case .awaitingHead(let call, _) = state else {
                return close(failing: WebhookHTTPError(.invalidResponse, "the webhook sent a response nobody asked for"))
            }
            status = Int(head.status.code)
            // After 101 the connection no longer speaks HTTP/1.1.
            keepAlive = head.isKeepAlive && status != 101
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > call.maxResponseBytes {
                return close(failing: Self.tooLarge(call, bodyBytes: length))
            }
            state = .receivingBody(call)
        case .body(var chunk):
            guard case .receivingBody(let call) = state else { return }
            // Reading stops at the chunk that passes the cap: the connection closes, and nothing
            // more of the body is read (what the kernel already holds is dropped with the socket).
            guard body.readableBytes + chunk.readableBytes <= call.maxResponseBytes else {
                return close(failing: Self.tooLarge(call, bodyBytes: body.readableBytes + chunk.readableBytes))
            }
            // The first chunk is kept as it is (no copy); later ones are appended to it.
            if body.readableBytes == 0 { body = chunk } else { body.writeBuffer(&chunk) }
        case .end:
            guard case .receivingBody(let call) = state else { return }
            let response = WebhookResponse(status: status, body: body)
            body = ByteBuffer()
            // The connection goes back before the caller resumes, so that a caller's next call
            // finds it idle rather than opening another.
            if keepAlive, context.channel.isActive, let connection {
                becomeIdle(connection)
            } else {
                state = .closed
                context.close(promise: nil)
            }
            call.finish(.success(response))
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        close(failing: WebhookHTTPError(connectionError: error))
    }

    func channelInactive(context: ChannelHandlerContext) {
        let previous = state
        state = .closed
        timer?.cancel()
        timer = nil
        let connection = self.connection
        self.connection = nil
        if let connection { pool.closed(connection) }
        switch previous {
        case .awaitingHead(let call, reused: true) where failure == nil || failure?.code == .connectionClosed:
            // A kept-alive connection that the server had closed (its idle timeout racing our
            // reuse): nothing of the response came back, so the webhook most likely never saw
            // the request. It is sent once more, on a new connection (docs/extensions.md).
            if call.detachToResend() {
                pool.execute(call, preferNew: true)
            } else {
                call.finish(.failure(failure ?? Self.closedEarly))
            }
        case .awaitingHead(let call, _), .receivingBody(let call):
            call.finish(.failure(failure ?? Self.closedEarly))
        case .starting, .idle, .closed:
            break
        }
        body = ByteBuffer()
        context.fireChannelInactive()
    }

    /// Puts the connection back into the pool (or to the next waiting call).
    private func becomeIdle(_ connection: PooledConnection) {
        let now = NIODeadline.now()
        state = .idle(since: now)
        arm(at: now + idleTimeout)
        pool.release(connection)
    }

    /// Makes sure the timer fires at `deadline` or before.
    private func arm(at deadline: NIODeadline) {
        guard timer == nil || deadline < timerDeadline, let context else { return }
        timer?.cancel()
        timerDeadline = deadline
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { self.timerFired() }
    }

    private func timerFired() {
        timer = nil
        let now = NIODeadline.now()
        switch state {
        case .awaitingHead(let call, _), .receivingBody(let call):
            if call.backstop <= now {
                close(failing: WebhookHTTPError(.timedOut, "the webhook did not answer before the client's deadline"))
            } else {
                arm(at: call.backstop)
            }
        case .idle(let since):
            if since + idleTimeout <= now {
                close(failing: WebhookHTTPError(.connectionClosed, "closed after idling"))
            } else {
                arm(at: since + idleTimeout)
            }
        case .starting, .closed:
            break
        }
    }

    private static let closedEarly = WebhookHTTPError(
        .connectionClosed, "the webhook closed the connection before its response was complete")

    private static func tooLarge(_ call: WebhookCall, bodyBytes: Int) -> WebhookHTTPError {
        WebhookHTTPError(
            .responseTooLarge, "the webhook's response body is larger than \(call.maxResponseBytes) bytes", bodyBytes: bodyBytes)
    }
}

extension WebhookHTTPError {
    /// What `error`, caught on an open connection, means for the call on it.
    init(connectionError error: any Error) {
        switch error {
        case let error as WebhookHTTPError:
            self = error
        case NIOSSLError.uncleanShutdown:
            self.init(.connectionClosed, "the webhook closed the TLS connection without a close_notify")
        case is NIOSSLError, is NIOSSLExtraError, is BoringSSLError:
            self.init(.tls, "TLS failed: \(error)")
        case is HTTPParserError, is NIOHTTPDecoderError:
            self.init(.invalidResponse, "the webhook's answer is not a valid HTTP/1.1 response (\(error))")
        default:
            self.init(.connectionClosed, "the connection to the webhook failed: \(error)")
        }
    }
}
