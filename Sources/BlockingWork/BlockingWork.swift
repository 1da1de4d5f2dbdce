import Dispatch
import Foundation

/// The one way the package runs blocking work off Swift's cooperative pool, whose few threads
/// must never block: librdkafka's calls, `getaddrinfo`, file I/O, reads of standard input.
///
/// Three shapes, by how long the work blocks:
/// - ``startThread(named:_:)``: a thread of its own for a loop that blocks for the life of a
///   component (librdkafka's poll loops, a reader of standard input);
/// - ``run(onThreadNamed:_:)``: one call that may block for seconds (librdkafka's metadata
///   requests, commits and transactions, which wait up to their time-outs), on a thread of its
///   own, so that several at once never wait for each other;
/// - ``run(_:)``: one short call (a DNS lookup, a file write), on Dispatch's global queue, which
///   has a few threads for all of them (a thread per call would cost more than the call).
/// Each is awaited without blocking the caller.
package enum BlockingWork {
    /// Starts `body` on a new thread named `name` (a real thread, not one of the pool's).
    package static func startThread(named name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }

    /// The result of `work`, which may block for seconds, run on a new thread named `name`.
    package static func run<Value: Sendable>(onThreadNamed name: String, _ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            startThread(named: name) { continuation.resume(returning: work()) }
        }
    }

    /// The result of the short blocking `work`, run on Dispatch's global queue.
    ///
    /// A blocking call cannot be interrupted: when the awaiting task is cancelled, the call still
    /// runs to its end and its result is dropped by whoever stopped waiting.
    package static func run<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: work())
            }
        }
    }
}
