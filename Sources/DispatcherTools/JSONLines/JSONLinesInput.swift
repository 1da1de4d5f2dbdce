import Dispatcher
import BlockingWork
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
package import Foundation

/// The lines of a file or of standard input, read as they come on a dedicated thread (blocking
/// reads stay off Swift's cooperative pool) with at most `capacity` lines read ahead.
package struct JSONLinesInput: AsyncSequence, Sendable {
    /// One line, without its line break.
    package typealias Element = [UInt8]
    /// Reading never throws: a read error ends the sequence and is kept in `readError`.
    package typealias Failure = Never

    /// The lines read so far and not yet taken.
    private let stream: AsyncStream<[UInt8]>
    /// One permit per line the reader may read ahead; the iterator returns one per line taken.
    private let slots: DispatchSemaphore
    /// The first read error, if reading stopped early.
    private let failure: ReadFailure

    /// Starts reading `handle` until its end.
    package init(reading handle: FileHandle, capacity: Int = 1_000) {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        let slots = DispatchSemaphore(value: Swift.max(1, capacity))
        let failure = ReadFailure()
        let stopped = ReadFailure()
        continuation.onTermination = { _ in
            // The consumer is gone: let the reader run to its end without waiting for permits.
            stopped.record("consumer stopped")
            slots.signal()
        }
        BlockingWork.startThread(named: "json-lines-reader") {
            Self.readLines(handle, into: continuation, slots: slots, failure: failure, stopped: stopped)
        }
        self.stream = stream
        self.slots = slots
        self.failure = failure
    }

    /// Why reading stopped before the end of the input, nil when it did not.
    package var readError: String? { failure.message }

    /// An iterator over the lines (make one: the lines are handed out once).
    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), slots: slots)
    }

    /// Hands out lines and returns a read-ahead permit for each.
    package struct AsyncIterator: AsyncIteratorProtocol {
        /// The lines read so far.
        var base: AsyncStream<[UInt8]>.Iterator
        /// The reader's read-ahead permits.
        let slots: DispatchSemaphore

        /// The next line, nil at the end of the input.
        package mutating func next() async -> [UInt8]? {
            guard let line = await base.next() else { return nil }
            slots.signal()
            return line
        }
    }

    /// The reader thread's loop: split at `\n` (a trailing `\r` removed), one permit per line.
    private static func readLines(
        _ handle: FileHandle,
        into continuation: AsyncStream<[UInt8]>.Continuation,
        slots: DispatchSemaphore,
        failure: ReadFailure,
        stopped: ReadFailure
    ) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        let descriptor = handle.fileDescriptor
        func hand(_ line: [UInt8]) {
            if stopped.message == nil { slots.wait() }
            continuation.yield(line.last == UInt8(ascii: "\r") ? Array(line.dropLast()) : line)
        }
        while stopped.message == nil {
            // A plain read(2): it returns what is available, where FileHandle's reads wait for a
            // full buffer (no streaming) or crash on errors.
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                failure.record(String(cString: strerror(errno)))
                break
            }
            if count == 0 { break }
            pending.append(contentsOf: buffer[..<count])
            var start = 0
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                hand(Array(pending[start..<newline]))
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty, stopped.message == nil { hand(pending) }
        continuation.finish()
    }
}

/// A message set at most once, readable from any thread.
private final class ReadFailure: Sendable {
    private let state = Mutex<String?>(nil)

    /// The message, nil until recorded.
    var message: String? { state.withLock { $0 } }

    /// Records `message` unless one was recorded before.
    func record(_ message: String) {
        state.withLock { if $0 == nil { $0 = message } }
    }
}
