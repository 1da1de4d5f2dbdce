import Foundation
import NIOCore
import NIOHTTP1

/// A webhook's POST without its body, serialised once per step: request line, `Host`, the
/// configured headers and the name of `Content-Length`. A call appends the length, the blank line
/// and the body, and writes the whole request as one buffer.
package struct WebhookRequestTemplate: Sendable {
    /// Where the request goes.
    package let endpoint: WebhookEndpoint
    /// The request's bytes up to and including `Content-Length: `.
    let prefix: ByteBuffer
    /// The request's head as the response decoder must see it: it decides from the method whether
    /// a response has a body (a POST's does, unless its status says otherwise).
    let head: HTTPRequestHead

    /// Header names the client writes itself or that would change the connection's framing.
    static let reservedHeaders: Set<String> = ["content-length", "transfer-encoding", "connection", "keep-alive", "upgrade", "te", "trailer"]

    /// Parses `url` (http or https, with a host) and checks `headers`.
    ///
    /// `Content-Type: application/json` is sent unless `headers` names a content type; a `Host`
    /// header in `headers` replaces the one made from the URL.
    /// - Throws: ``InvalidWebhookRequest`` for a URL that is not http(s) with a host, a header name
    ///   that is not an HTTP token, a value with a line break, or a header the client manages.
    package init(url: String, headers: [(name: String, value: String)]) throws(InvalidWebhookRequest) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            throw InvalidWebhookRequest(.url, "expected an http or https URL with a host")
        }
        if components.user != nil || components.password != nil {
            throw InvalidWebhookRequest(.url, "credentials in the URL are not supported; send them in a header")
        }
        let usesTLS = scheme == "https"
        let bareHost = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        endpoint = WebhookEndpoint(usesTLS: usesTLS, host: bareHost, port: components.port ?? (usesTLS ? 443 : 80))
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        head = HTTPRequestHead(version: .http1_1, method: .POST, uri: target)

        var hostHeader = components.port == nil ? endpoint.bracketedHost : "\(endpoint.bracketedHost):\(endpoint.port)"
        var contentType = "application/json"
        var others = ""
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy(Self.isTokenByte) else {
                throw InvalidWebhookRequest(.headers, "header name \(name) is not an HTTP token")
            }
            guard !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) else {
                throw InvalidWebhookRequest(.headers, "the value of header \(name) contains a line break")
            }
            switch name.lowercased() {
            case let reserved where Self.reservedHeaders.contains(reserved):
                throw InvalidWebhookRequest(.headers, "header \(name) is set by the client")
            case "host": hostHeader = value
            case "content-type": contentType = value
            default: others += "\(name): \(value)\r\n"
            }
        }
        let text = "POST \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\nContent-Type: \(contentType)\r\n\(others)Content-Length: "
        prefix = ByteBuffer(string: text)
    }

    /// The whole request for `body`, in one buffer.
    func request(body: some Collection<UInt8>) -> ByteBuffer {
        var buffer = ByteBufferAllocator().buffer(capacity: prefix.readableBytes + 24 + body.count)
        buffer.writeImmutableBuffer(prefix)
        buffer.writeString(String(body.count))
        buffer.writeStaticString("\r\n\r\n")
        buffer.writeBytes(body)
        return buffer
    }

    /// Whether `byte` may appear in a header name (RFC 9110 `tchar`).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

/// A webhook URL or header the client cannot send, or TLS settings it cannot load.
package struct InvalidWebhookRequest: Error, Sendable, CustomStringConvertible {
    /// Which part of the request is wrong.
    package enum Part: Sendable {
        case url
        case headers
        case tls
    }

    /// Which part of the request is wrong.
    package var part: Part
    /// What is wrong, for people.
    package var description: String

    /// A problem with `part`, which `description` explains.
    init(_ part: Part, _ description: String) {
        self.part = part
        self.description = description
    }
}
