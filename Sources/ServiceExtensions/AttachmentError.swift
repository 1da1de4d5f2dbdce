import Dispatcher

/// Why an `attachment` step refused or failed a download (the original content is then delivered).
///
/// Every case names its rule (`rule`), which the failure's message starts with, so a report reader
/// can tell a safety refusal from a server problem.
enum AttachmentError: ServiceExtensionError, Sendable, Hashable, CustomStringConvertible {
    /// A URL (the payload's value at `urlPath`, or a hop's, as `place` names it) is not absolute with a host.
    case invalidURL(place: String)
    /// A URL's host is neither a DNS name nor an IP address literal, once percent-decoded, or the
    /// HTTP client would read it differently from the check (`URLHost`).
    case invalidHost
    /// The URL's scheme is not http or https.
    case schemeNotAllowed(String)
    /// The host name did not resolve to any address.
    case unresolvable(host: String, detail: String)
    /// The host is, or resolves to, an address that is not public and not in `allowHosts`.
    case addressNotAllowed(host: String, address: IPAddress, scope: IPAddress.Scope)
    /// More than `AttachmentDownloader.maxRedirects` redirects.
    case tooManyRedirects(Int)
    /// A redirect without a usable `Location`.
    case badRedirect(String)
    /// The server answered with a status other than 200 or a redirect.
    case status(Int)
    /// `Content-Type` names something other than an image, audio or video.
    case contentTypeNotMedia(String)
    /// The bytes are none of the supported formats.
    case unsupportedFormat
    /// The bytes are of one kind and `Content-Type` names another.
    case formatMismatch(format: MediaFormat, declared: MediaKind)
    /// The body is longer than the limit of its kind; `read` is how much was read before stopping.
    case tooLarge(kind: MediaKind, limit: Int, read: Int)
    /// The file could not be stored.
    case storeFailed(String)
    /// The transfer failed (connection refused, reset, timed out...).
    case transfer(String)

    /// The rule the failure falls under, as named in reports and the docs.
    var rule: String {
        switch self {
        case .invalidURL, .invalidHost: "url"
        case .schemeNotAllowed: "scheme"
        case .unresolvable: "resolve"
        case .addressNotAllowed: "non-public-address"
        case .tooManyRedirects, .badRedirect: "redirects"
        case .status: "status"
        case .contentTypeNotMedia: "content-type"
        case .unsupportedFormat, .formatMismatch: "format"
        case .tooLarge: "max-bytes"
        case .storeFailed: "store"
        case .transfer: "transfer"
        }
    }

    /// The failure's kind in log lines: `attachment-` and the rule.
    var kind: String { "attachment-\(rule)" }

    var description: String {
        "attachment \(rule): " + detail
    }

    private var detail: String {
        switch self {
        // URLs are not echoed: signed media URLs carry secrets in their query.
        case .invalidURL(let place):
            "\(place) is not an absolute URL with a host"
        case .invalidHost:
            "the host of the URL to fetch is neither a DNS name (letters, digits, '-', '_' and dots; "
                + "an internationalised name in its xn-- form) nor an IP address; '%' is allowed only as an IPv6 zone"
        case .schemeNotAllowed(let scheme):
            "scheme \(scheme) refused: only http and https are fetched"
        case .unresolvable(let host, let detail):
            "cannot resolve \(host): \(detail)"
        case .addressNotAllowed(let host, let address, let scope):
            "\(host) is \(address), a \(scope.rawValue) address, refused before connecting (not in allowHosts)"
        case .tooManyRedirects(let count):
            "more than \(count) redirects"
        case .badRedirect(let problem):
            "bad redirect: \(problem)"
        case .status(let code):
            "the media server answered with status \(code)"
        case .contentTypeNotMedia(let type):
            "Content-Type \(type) is not an image, audio or video"
        case .unsupportedFormat:
            "the content is not JPEG, GIF, PNG, AIFF, WAV, MP3, M4A, MPEG, MPEG-2, MP4 or AVI"
        case .formatMismatch(let format, let declared):
            "the content is \(format.rawValue) (\(format.kind.rawValue)) but Content-Type says \(declared.rawValue)"
        case .tooLarge(let kind, let limit, let read):
            "the \(kind.rawValue) is larger than \(limit) bytes (stopped after reading \(read))"
        case .storeFailed(let problem):
            "cannot store the file: \(problem)"
        case .transfer(let problem):
            "download failed: \(problem)"
        }
    }
}
