/// `dispatch.tooManyRequests`: at most `limit` accepted requests to one device token in any
/// `window`; the next is `TooManyRequests` (SEMANTICS section 12.3).
public struct RequestRateLimit: Sendable, Hashable {
    /// How many accepted requests the window holds before the next is refused (at least 1).
    public var limit: Int
    /// The window's length.
    public var window: Duration

    /// A limit of `limit` requests per `window`.
    public init(limit: Int, window: Duration) {
        self.limit = limit
        self.window = window
    }
}
