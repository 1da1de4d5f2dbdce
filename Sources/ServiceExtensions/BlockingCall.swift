import Dispatch

/// Runs a blocking call (getaddrinfo, file writes) on a Dispatch queue, off Swift's cooperative
/// pool, whose few threads must never block.
enum BlockingCall {
    /// The result of `work`, run on a global Dispatch queue.
    ///
    /// A blocking call cannot be interrupted: when the awaiting task is cancelled, the call still
    /// runs to its end and its result is then dropped by whoever stopped waiting.
    static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: work())
            }
        }
    }
}
