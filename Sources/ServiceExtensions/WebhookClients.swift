public import AsyncHTTPClient
import Synchronization

/// The HTTP clients webhook calls share: several independent connection pools, taken in turn.
///
/// One AsyncHTTPClient pool scans its connections on every connection it opens and releases, so
/// its cost per call grows with the number of connections: with 10,000 connections to one slow
/// webhook (`dispatch.maxInFlight` calls of a second each), a single pool took about a third of
/// the worker's CPU (docs/performance.md). Shards of at most ``connectionsPerShard`` connections
/// keep that cost small while the total still allows one connection per call in flight.
public final class WebhookClients: Sendable {
    /// The most connections to one host a shard opens.
    package static let connectionsPerShard = 500

    /// The shards (at least one).
    package let clients: [HTTPClient]
    private let next = Atomic<Int>(0)

    /// Wraps existing clients (at least one); the caller owns and shuts them down.
    public init(_ clients: [HTTPClient]) {
        precondition(!clients.isEmpty, "WebhookClients needs at least one client")
        self.clients = clients
    }

    /// Creates enough shards for `connectionsPerHost` connections in all, each built with
    /// `configuration(connectionsPerShard)`. Shut them down with ``shutdown()``.
    public convenience init(connectionsPerHost: Int, configuration: (Int) -> HTTPClient.Configuration) {
        let total = max(1, connectionsPerHost)
        let shards = (total + Self.connectionsPerShard - 1) / Self.connectionsPerShard
        let perShard = (total + shards - 1) / shards
        self.init((0..<shards).map { _ in
            HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration(perShard))
        })
    }

    /// The client for the next call: the shards in turn.
    package func nextClient() -> HTTPClient {
        clients[next.wrappingAdd(1, ordering: .relaxed).oldValue % clients.count]
    }

    /// Shuts every shard down.
    public func shutdown() async throws {
        for client in clients { try await client.shutdown() }
    }
}
