import NIOCore
import NIOHTTP1

/// Writes a webhook request that is already serialised: the body part's buffer goes out as it is,
/// and the head and end parts are dropped.
///
/// The head part is written only so that the response decoder, which sits between this writer
/// and the connection's handler, sees a request go out (it pairs each response with a request's
/// method); serialising it again per call would be wasted work, since the whole request is in the
/// body part's buffer (``WebhookRequestTemplate``).
final class RawRequestWriter: ChannelOutboundHandler, RemovableChannelHandler {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = ByteBuffer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .body(.byteBuffer(let buffer)):
            context.write(wrapOutboundOut(buffer), promise: promise)
        case .head, .end, .body(.fileRegion):
            promise?.succeed()
        }
    }
}
