public import AsyncHTTPClient
public import Dispatcher

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
    /// Runs `body` with a registry of the built-in kinds (plus whatever `addKinds` registers),
    /// backed by one pooled `HTTPClient` that is shut down when `body` returns or throws.
    public static func withRegistry<Result: Sendable>(
        maxResponseBytes: Int = defaultMaxResponseBytes,
        addKinds: (inout ExtensionRegistry) -> Void = { _ in },
        _ body: (ExtensionRegistry) async throws -> Result
    ) async throws -> Result {
        let client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup)
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
