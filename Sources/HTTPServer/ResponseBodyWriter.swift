public import NIOCore
import NIOHTTP1

/// Writes the chunks of a streamed response body (``Response/Body/stream(_:)``).
public struct ResponseBodyWriter: Sendable {
    let outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>

    /// Sends `chunk`, waiting while the connection cannot take more.
    ///
    /// - Throws: when the connection is closed (the client went away, or the server stopped).
    public func write(_ chunk: ByteBuffer) async throws {
        // An empty chunk would end a chunked body early: there is nothing to send anyway.
        guard chunk.readableBytes > 0 else { return }
        try await outbound.write(.body(.byteBuffer(chunk)))
    }
}
