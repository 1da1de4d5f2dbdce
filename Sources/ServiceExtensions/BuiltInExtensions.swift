public import AsyncHTTPClient
public import Dispatcher
import NIOCore

/// Registers the built-in extension kinds `rewrite` and `webhook` (SEMANTICS section 4.1).
public enum BuiltInExtensions {
    /// The default cap on a webhook's response body: 1 MiB.
    public static let defaultMaxResponseBytes = 1 << 20

    /// Registers `rewrite`, `webhook`, `attachment` and `decrypt` in `registry`.
    /// - Parameters:
    ///   - httpClient: the one pooled client every webhook call shares; the caller owns it and
    ///     shuts it down after the last dispatch.
    ///   - maxResponseBytes: the largest webhook response body accepted.
    public static func register(
        in registry: inout ExtensionRegistry,
        httpClient: HTTPClient,
        maxResponseBytes: Int = defaultMaxResponseBytes
    ) {
        registerRewrite(in: &registry)
        registry.register(kind: "webhook") { options throws(ExtensionOptionsError) in
            // Stateless: one instance serves every request.
            let webhook = try WebhookExtension(options: options, client: httpClient, maxResponseBytes: maxResponseBytes)
            return { webhook }
        }
        registerAttachment(in: &registry, httpClient: httpClient)
        registerDecrypt(in: &registry)
    }

    /// Registers only `rewrite`, which needs no HTTP client.
    public static func registerRewrite(in registry: inout ExtensionRegistry) {
        registry.register(kind: "rewrite") { options throws(ExtensionOptionsError) in
            // Stateless: one instance serves every request.
            let rewrite = try RewriteExtension(options: options)
            return { rewrite }
        }
    }

    /// A registry holding the built-in kinds.
    public static func registry(httpClient: HTTPClient, maxResponseBytes: Int = defaultMaxResponseBytes) -> ExtensionRegistry {
        var registry = ExtensionRegistry()
        register(in: &registry, httpClient: httpClient, maxResponseBytes: maxResponseBytes)
        return registry
    }
}

extension BuiltInExtensions {
    /// The default time to establish a webhook connection (retried with backoff meanwhile).
    public static let defaultConnectTimeout: Duration = .seconds(1)

    /// The configuration of the shared webhook client: connections are retried with backoff, but a
    /// webhook that cannot be reached within `connectTimeout` fails the step (SEMANTICS 4.1: a
    /// connection failure fails it) instead of holding it until the extension deadline.
    public static func httpClientConfiguration(connectTimeout: Duration = defaultConnectTimeout) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        let (seconds, attoseconds) = connectTimeout.components
        configuration.timeout.connect = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        configuration.redirectConfiguration = .disallow
        return configuration
    }

    /// Runs `body` with a registry of the built-in kinds (plus whatever `addKinds` registers),
    /// backed by one pooled `HTTPClient` that is shut down when `body` returns or throws.
    public static func withRegistry<Result: Sendable>(
        maxResponseBytes: Int = defaultMaxResponseBytes,
        connectTimeout: Duration = defaultConnectTimeout,
        addKinds: (inout ExtensionRegistry) -> Void = { _ in },
        _ body: (ExtensionRegistry) async throws -> Result
    ) async throws -> Result {
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: httpClientConfiguration(connectTimeout: connectTimeout))
        var registry = registry(httpClient: client, maxResponseBytes: maxResponseBytes)
        addKinds(&registry)
        let result: Result
        do {
            result = try await body(registry)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try await client.shutdown()
        return result
    }
}
