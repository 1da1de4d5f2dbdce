/// The `http` section: the health and metrics endpoint.
public struct HTTPSettings: Sendable, Hashable {
    /// `http.host`: the address to listen on.
    public var host: String = "0.0.0.0"
    /// `http.port`: the port to listen on (0 picks a free one).
    public var port: Int = 9090
    /// `http.livenessLimit`: how long the worker may make no progress before it reports itself dead.
    public var livenessLimit: Duration = .seconds(60)

    /// The defaults.
    public init() {}
}
