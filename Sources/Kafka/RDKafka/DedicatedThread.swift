import Foundation

/// Starts threads of our own for librdkafka's blocking calls, keeping them off Swift's cooperative pool.
enum DedicatedThread {
    /// Runs `body` on a new thread named `name` (a real pthread, not a pool thread).
    static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }

    /// Runs the blocking `body` on a new thread and suspends (without blocking the pool) until it returns.
    static func run<T: Sendable>(name: String, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            start(name: name) { continuation.resume(returning: body()) }
        }
    }
}
