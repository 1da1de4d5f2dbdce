public import AsyncHTTPClient
public import Dispatcher
import NIOCore

/// Registers the built-in extension kinds `rewrite` and `webhook` (SEMANTICS section 4.1).
public enum BuiltInExtensions {
    /// The default cap on a webhook's response body: 1 MiB.
    public static let defaultMaxResponseBytes = 1 << 20

    /// Registers `rewrite`, `webhook`, `attachment` and `decrypt` in `registry`.
    /// - Parameters:
    ///   - httpClient: the pooled client attachment downloads share; the caller owns it and
    ///     shuts it down after the last dispatch.
    ///   - webhookClients: the clients webhook calls share (default: `httpClient` alone); the
    ///     caller owns them too.
    ///   - maxResponseBytes: the largest webhook response body accepted.
    ///   - attachmentStores: the stores `attachment` steps keep their files in (see
    ///     ``registerAttachment(in:httpClient:stores:)``).
    public static func register(
        in registry: inout ExtensionRegistry,
        httpClient: HTTPClient,
        webhookClients: WebhookClients? = nil,
        maxResponseBytes: Int = defaultMaxResponseBytes,
        attachmentStores: AttachmentStores = AttachmentStores()
    ) {
        registerRewrite(in: &registry)
        let webhookClients = webhookClients ?? WebhookClients([httpClient])
        registry.register(kind: "webhook") { options throws(ExtensionOptionsError) in
            // Stateless: one instance serves every request.
            let webhook = try WebhookExtension(options: options, clients: webhookClients, maxResponseBytes: maxResponseBytes)
            return { webhook }
        }
        registerAttachment(in: &registry, httpClient: httpClient, stores: attachmentStores)
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
    public static func registry(
        httpClient: HTTPClient, webhookClients: WebhookClients? = nil, maxResponseBytes: Int = defaultMaxResponseBytes,
        attachmentStores: AttachmentStores = AttachmentStores()
    ) -> ExtensionRegistry {
        var registry = ExtensionRegistry()
        register(
            in: &registry, httpClient: httpClient, webhookClients: webhookClients, maxResponseBytes: maxResponseBytes,
            attachmentStores: attachmentStores)
        return registry
    }
}

extension BuiltInExtensions {
    /// The default time to establish a webhook connection. The step's deadline bounds it too.
    public static let defaultConnectTimeout: Duration = .seconds(10)

    /// The default number of connections the shared client opens to one host at once: as many as
    /// a worker has requests in flight (`dispatch.maxInFlight`'s default), so a slow webhook is
    /// called concurrently rather than queued behind a handful of connections.
    public static let defaultConnectionsPerHost = 10_000

    /// The configuration of the shared webhook client.
    ///
    /// A refused connection fails the step at once (SEMANTICS 4.1: a connection failure fails it):
    /// the client's own retrying of connection establishment is off, as it would hold the step
    /// until the connect timeout. The connect timeout is long (10 s) because under a burst of
    /// thousands of calls a webhook's accept queue overflows and the kernel retransmits the
    /// dropped SYNs after 1 s, 3 s, ...: a short timeout would fail calls the webhook would serve.
    ///
    /// `connectionsPerHost` matters as much: AsyncHTTPClient's default of 8 would queue all but 8
    /// calls, and a queued call counts against the connect timeout, so under load calls would fail
    /// without ever reaching the webhook.
    public static func httpClientConfiguration(
        connectTimeout: Duration = defaultConnectTimeout,
        connectionsPerHost: Int = defaultConnectionsPerHost
    ) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, connectionsPerHost))
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.timeout.connect = TimeAmount(connectTimeout)
        configuration.redirectConfiguration = .disallow
        return configuration
    }

    /// Runs `body` with a registry of the built-in kinds (plus whatever `addKinds` registers),
    /// backed by pooled `HTTPClient`s (webhook calls spread over ``WebhookClients`` shards) that
    /// are shut down when `body` returns or throws. While `body` runs, the attachment stores of
    /// the steps configured from the registry are swept for age (``AttachmentStores/runSweeps(every:)``).
    public static func withRegistry<Result: Sendable>(
        maxResponseBytes: Int = defaultMaxResponseBytes,
        connectTimeout: Duration = defaultConnectTimeout,
        connectionsPerHost: Int = defaultConnectionsPerHost,
        addKinds: (inout ExtensionRegistry) -> Void = { _ in },
        _ body: (ExtensionRegistry) async throws -> Result
    ) async throws -> Result {
        let client = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup,
            configuration: httpClientConfiguration(connectTimeout: connectTimeout, connectionsPerHost: connectionsPerHost))
        let webhookClients = WebhookClients(connectionsPerHost: connectionsPerHost) { perShard in
            httpClientConfiguration(connectTimeout: connectTimeout, connectionsPerHost: perShard)
        }
        let stores = AttachmentStores()
        var registry = registry(
            httpClient: client, webhookClients: webhookClients, maxResponseBytes: maxResponseBytes, attachmentStores: stores)
        addKinds(&registry)
        let frozenRegistry = registry
        let result: Result
        do {
            result = try await withThrowingTaskGroup(of: Void.self) { group in
                // A child task, so the sweeps end (and are awaited) with `body`.
                group.addTask { await stores.runSweeps() }
                defer { group.cancelAll() }
                return try await body(frozenRegistry)
            }
        } catch {
            try? await webhookClients.shutdown()
            try? await client.shutdown()
            throw error
        }
        try await webhookClients.shutdown()
        try await client.shutdown()
        return result
    }
}
