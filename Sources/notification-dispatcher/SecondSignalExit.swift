import Foundation
import Synchronization

/// Makes a second SIGTERM or SIGINT end the process at once, while the first one starts the
/// graceful shutdown that swift-service-lifecycle runs.
///
/// Safe because delivery is at-least-once: whatever was in flight is uncommitted and processed again.
enum SecondSignalExit {
    /// The signal sources live for the whole process.
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Installs the handlers.
    static func install() {
        let count = Mutex(0)
        let newSources = [SIGTERM, SIGINT].map { signalNumber in
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                let seen = count.withLock { count -> Int in
                    count += 1
                    return count
                }
                if seen >= 2 {
                    printError("second signal: exiting now; records in flight will be processed again")
                    exit(130)
                }
            }
            source.resume()
            return source
        }
        sources.withLock { $0.append(contentsOf: newSources) }
    }
}
