public import NIOHTTP1

/// Routes requests to handlers by method and path; 404 for any other request.
///
/// A route's path is matched segment by segment; a segment `:name` matches any one segment and
/// hands its value to the handler as `request.parameters["name"]`. Leading and trailing slashes
/// do not matter (`"hook"` and `"/hook"` are one route).
public struct Router: Sendable {
    /// What answers a request.
    public typealias Handler = @Sendable (Request) async throws -> Response

    private struct Route: Sendable {
        var method: HTTPMethod
        var segments: [Substring]
        var handler: Handler
    }

    private var routes: [Route] = []

    /// A router with no routes.
    public init() {}

    /// Answers `GET path` with `handler`.
    public mutating func get(_ path: String, _ handler: @escaping Handler) {
        on(.GET, path, handler)
    }

    /// Answers `POST path` with `handler`.
    public mutating func post(_ path: String, _ handler: @escaping Handler) {
        on(.POST, path, handler)
    }

    /// Answers `method path` with `handler`; the first route added wins where two match.
    public mutating func on(_ method: HTTPMethod, _ path: String, _ handler: @escaping Handler) {
        routes.append(Route(method: method, segments: Self.segments(path), handler: handler))
    }

    /// The response of the first route matching `request`, or 404.
    public func respond(to request: Request) async throws -> Response {
        let segments = Self.segments(request.path)
        for route in routes where route.method == request.method && route.segments.count == segments.count {
            guard let parameters = Self.match(route.segments, segments) else { continue }
            var request = request
            request.parameters = parameters
            return try await route.handler(request)
        }
        return Response(status: .notFound)
    }

    private static func segments(_ path: some StringProtocol) -> [Substring] {
        path.split(separator: "/").map { Substring($0) }
    }

    /// The parameters when `template` matches `segments` (of equal count), nil otherwise.
    private static func match(_ template: [Substring], _ segments: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (expected, actual) in zip(template, segments) {
            if expected.first == ":" {
                parameters[String(expected.dropFirst())] = String(actual)
            } else if expected != actual {
                return nil
            }
        }
        return parameters
    }
}
