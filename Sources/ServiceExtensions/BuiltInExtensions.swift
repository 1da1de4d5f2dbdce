public import Dispatcher
import NIOCore
public import WebhookHTTP

/// Registers the built-in extension kinds `rewrite` and `webhook` (SEMANTICS section 4.1).
public enum BuiltInExtensions {
    /// The default cap on a webhook's response body: 1 MiB.
    public static let defaultMaxResponseBytes = 1 << 20

    /// Registers `rewrite`, `webhook`, `attachment` and `decrypt` in `registry`.
    /// - Parameters:
    ///   - webhookClient: the client webhook calls and attachment downloads share
    ///     (``webhookClientConfiguration(connectTimeout:connectionsPerHost:)``); the caller owns it
    ///     and shuts it down after the last dispatch.
    ///   - maxResponseBytes: the largest webhook response body accepted.
    ///   - attachmentStores: the stores `attachment` steps keep their files in (see
    ///     ``registerAttachment(in:client:stores:)``).
    public static func register(
        in registry: inout ExtensionRegistry,
        webhookClient: WebhookHTTPClient,
        maxResponseBytes: Int = defaultMaxResponseBytes,
        attachmentStores: AttachmentStores = AttachmentStores()
    ) {
        registerRewrite(in: &registry)
        registry.register(kind: "webhook") { options throws(ExtensionOptionsError) in
            // Stateless: one instance serves every request.
            let webhook = try WebhookExtension(options: options, client: webhookClient, maxResponseBytes: maxResponseBytes)
            return { webhook }
        }
        registerAttachment(in: &registry, client: webhookClient, stores: attachmentStores)
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
        webhookClient: WebhookHTTPClient, maxResponseBytes: Int = defaultMaxResponseBytes,
        attachmentStores: AttachmentStores = AttachmentStores()
    ) -> ExtensionRegistry {
        var registry = ExtensionRegistry()
        register(
            in: &registry, webhookClient: webhookClient, maxResponseBytes: maxResponseBytes,
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

    /// The configuration of the shared webhook client (``WebhookHTTPClient``): `connectTimeout`,
    /// at most `connectionsPerHost` connections to one endpoint, idle connections closed after
    /// 60 s, TLS with the system's trust roots. The client follows no redirect and never retries
    /// connection establishment.
    ///
    /// A refused connection fails the step at once (SEMANTICS 4.1: a connection failure fails it).
    /// The connect timeout is long (10 s) because under a burst of thousands of calls a webhook's
    /// accept queue overflows and the kernel retransmits the dropped SYNs after 1 s, 3 s, ...: a
    /// short timeout would fail calls the webhook would serve.
    ///
    /// `connectionsPerHost` matters as much: HTTP/1.1 carries one call per connection, so a limit
    /// of a handful would queue all other calls behind them, and a slow webhook would be called
    /// one handful at a time.
    public static func webhookClientConfiguration(
        connectTimeout: Duration = defaultConnectTimeout,
        connectionsPerHost: Int = defaultConnectionsPerHost
    ) -> WebhookHTTPClient.Configuration {
        var configuration = WebhookHTTPClient.Configuration()
        configuration.connectTimeout = connectTimeout
        configuration.connectionsPerHost = max(1, connectionsPerHost)
        configuration.idleTimeout = .seconds(60)
        return configuration
    }

    /// Runs `body` with a registry of the built-in kinds (plus whatever `addKinds` registers),
    /// backed by a ``WebhookHTTPClient`` (webhook calls and attachment downloads), shut down when
    /// `body` returns or throws. While `body` runs, the attachment stores of
    /// the steps configured from the registry are swept for age (``AttachmentStores/runSweeps(every:)``).
    public static func withRegistry<Result: Sendable>(
        maxResponseBytes: Int = defaultMaxResponseBytes,
        connectTimeout: Duration = defaultConnectTimeout,
        connectionsPerHost: Int = defaultConnectionsPerHost,
        addKinds: (inout ExtensionRegistry) -> Void = { _ in },
        _ body: (ExtensionRegistry) async throws -> Result
    ) async throws -> Result {
        let webhookClient = WebhookHTTPClient(
            configuration: webhookClientConfiguration(connectTimeout: connectTimeout, connectionsPerHost: connectionsPerHost))
        let stores = AttachmentStores()
        var registry = registry(
            webhookClient: webhookClient, maxResponseBytes: maxResponseBytes, attachmentStores: stores)
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
            await webhookClient.shutdown()
            throw error
        }
        await webhookClient.shutdown()
        return result
    }
}
