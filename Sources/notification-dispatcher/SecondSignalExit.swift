import Foundation
import ServiceLifecycle
import UnixSignals

/// Makes a second SIGTERM or SIGINT end the process at once, while the first one starts the
/// graceful shutdown that the service group runs.
///
/// Safe because delivery is at-least-once: whatever was in flight is uncommitted and processed
/// again by the group. Put it first in the group: services stop in reverse order, so it keeps
/// listening while the others shut down.
struct SecondSignalExit: Service {
    func run() async throws {
        var seen = 0
        for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint).cancelOnGracefulShutdown() {
            seen += 1
            if seen >= 2 {
                printError("second signal: exiting now; records in flight will be processed again")
                exit(130)
            }
        }
    }
}
