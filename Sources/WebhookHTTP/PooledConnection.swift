import NIOCore

/// A kept-alive connection of a pool: its channel and the handler that runs calls on it.
///
/// - Important: the handler lives on the channel's event loop; every method here hops there
///   (or runs at once when already on it).
final class PooledConnection: Sendable {
    /// The channel.
    let channel: any Channel
    /// The handler, reached only on the channel's event loop.
    private let handler: NIOLoopBound<WebhookConnectionHandler>

    init(channel: any Channel, handler: NIOLoopBound<WebhookConnectionHandler>) {
        self.channel = channel
        self.handler = handler
    }

    /// Writes `call`'s request on this connection.
    func run(_ call: WebhookCall) {
        let loop = channel.eventLoop
        if loop.inEventLoop {
            handler.value.start(call)
        } else {
            loop.execute { self.handler.value.start(call) }
        }
    }

    /// Closes the connection if it is still running `call` (cancelled by its caller), so that its
    /// response is never taken for another call's.
    func abandon(_ call: WebhookCall) {
        channel.eventLoop.execute { self.handler.value.abandon(call) }
    }

    /// Closes the connection, failing a call in progress with `error`.
    func close(failing error: WebhookHTTPError) {
        channel.eventLoop.execute { self.handler.value.close(failing: error) }
    }
}
