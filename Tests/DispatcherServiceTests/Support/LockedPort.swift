import Synchronization

/// A port number found by one task and read by another.
final class LockedPort: Sendable {
    private let port = Mutex(0)

    /// The port found (0 before).
    var value: Int { port.withLock { $0 } }

    /// Records the port found.
    func set(_ value: Int) { port.withLock { $0 = value } }
}
