import Foundation
public import Notifications
import Synchronization

/// Dispatches JSON-lines records offline (the `dispatch` command): requests, and responses where a
/// line's `topic` is the responses topic. Lines are processed concurrently, up to a bound, and
/// their output lines come out in input order as soon as every earlier line is done, so one slow
/// extension delays only the output behind it.
public struct JSONLinesDispatch: Sendable {
    /// What one input line came to.
    public enum LineResult: Sendable {
        /// A blank line: nothing (it still counts for offsets).
        case blank
        /// A line that is not a record; it produces nothing.
        case invalid(JSONLineError)
        /// The dispatch result of a valid line (a request's or a response's).
        case dispatched(DispatchResult)
    }

    /// The dispatcher applying the rules.
    public let dispatcher: Dispatcher
    /// The app-states table to use.
    public let appStates: any AppStateLookup
    /// How many lines may be processed or waiting for output at once.
    public let maxConcurrent: Int

    /// Creates an offline dispatch.
    public init(dispatcher: Dispatcher, appStates: any AppStateLookup = NoAppStates(), maxConcurrent: Int = 1_000) {
        self.dispatcher = dispatcher
        self.appStates = appStates
        self.maxConcurrent = max(1, maxConcurrent)
    }

    /// The source of line `offset` (from 0, blank lines counted): the configured requests topic, partition 0.
    public func source(ofLine offset: Int) -> RecordSource {
        RecordSource(topic: dispatcher.configuration.topics.requests, partition: 0, offset: Int64(offset))
    }

    /// Processes one line: a response when its `topic` is the responses topic (its source is then
    /// that topic, partition 0, the line's offset), else a request.
    public func process(_ line: [UInt8], offset: Int) async -> LineResult {
        if JSONLines.isBlank(line) { return .blank }
        do {
            let record = try JSONLines.decode(line, offset: offset, topics: dispatcher.configuration.topics)
            return .dispatched(await dispatcher.decide(record, appStates: appStates, receivedAt: Date()))
        } catch {
            return .invalid(error)
        }
    }

    /// Processes `lines`, calling `emit` with each line's offset and result in input order.
    /// - Returns: the number of invalid lines.
    public func run(lines: [[UInt8]], emit: @escaping @Sendable (_ offset: Int, _ result: LineResult) -> Void) async -> Int {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        for line in lines { continuation.yield(line) }
        continuation.finish()
        return await run(lines: stream, emit: emit)
    }

    /// Processes `lines` as they arrive (e.g. from `JSONLinesInput`), calling `emit` with each
    /// line's offset and result in input order, as soon as every earlier line is done; no more
    /// lines are taken while `maxConcurrent` are in progress or waiting behind a slow one.
    /// - Parameter emit: called one line at a time (never concurrently), from the task that
    ///   completed the line.
    /// - Returns: the number of invalid lines.
    public func run(
        lines: some AsyncSequence<[UInt8], Never>,
        emit: @escaping @Sendable (_ offset: Int, _ result: LineResult) -> Void
    ) async -> Int {
        let emitter = OrderedEmitter(emit: emit)
        await withTaskGroup(of: Void.self) { group in
            var offset = -1
            for await line in lines {
                offset += 1
                // Bound both the work in flight and the results waiting behind a slow line.
                while offset - emitter.emittedCount >= maxConcurrent {
                    guard await group.next() != nil else { break }
                }
                let lineOffset = offset
                group.addTask { emitter.complete(lineOffset, await process(line, offset: lineOffset)) }
            }
            await group.waitForAll()
        }
        return emitter.invalidCount
    }

    /// Splits `data` into lines at `\n` (a trailing `\r` removed); a final newline ends the last line.
    public static func lines(of data: [UInt8]) -> [[UInt8]] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line)
        }
        if data.last == UInt8(ascii: "\n") || data.isEmpty { lines.removeLast() }
        return lines
    }
}

/// Emits line results in input order as they complete: a result waits until every earlier one
/// was emitted, then it and every waiting successor go out at once.
private final class OrderedEmitter: Sendable {
    /// The next offset to emit, the results waiting for it, and the invalid lines so far.
    private struct State {
        var next = 0
        var waiting: [Int: JSONLinesDispatch.LineResult] = [:]
        var invalid = 0
    }

    private let state = Mutex(State())
    /// Where results go, one at a time.
    private let emit: @Sendable (Int, JSONLinesDispatch.LineResult) -> Void

    /// An emitter calling `emit` for each line in order.
    init(emit: @escaping @Sendable (Int, JSONLinesDispatch.LineResult) -> Void) {
        self.emit = emit
    }

    /// How many lines were emitted.
    var emittedCount: Int { state.withLock { $0.next } }

    /// How many emitted lines were invalid.
    var invalidCount: Int { state.withLock { $0.invalid } }

    /// Records the result of line `offset` and emits every result now in order. Emitting inside
    /// the lock keeps the output in order and never concurrent.
    func complete(_ offset: Int, _ result: JSONLinesDispatch.LineResult) {
        state.withLock { state in
            state.waiting[offset] = result
            while let ready = state.waiting.removeValue(forKey: state.next) {
                if case .invalid = ready { state.invalid += 1 }
                emit(state.next, ready)
                state.next += 1
            }
        }
    }
}
