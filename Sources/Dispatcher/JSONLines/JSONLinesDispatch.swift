import Foundation
public import Notifications

/// Dispatches JSON-lines request records offline (the `dispatch` command): lines are processed
/// concurrently, up to a bound, and their output lines come out in input order as soon as every
/// earlier line is done, so one slow extension delays only the output behind it.
public struct JSONLinesDispatch: Sendable {
    /// What one input line came to.
    public enum LineResult: Sendable {
        /// A blank line: nothing (it still counts for offsets).
        case blank
        /// A line that is not a request record; it produces nothing.
        case invalid(JSONLineError)
        /// The dispatch result of a valid line.
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

    /// Processes one line.
    public func process(_ line: [UInt8], offset: Int) async -> LineResult {
        if JSONLines.isBlank(line) { return .blank }
        do {
            let record = try JSONLines.decodeRequest(line, source: source(ofLine: offset))
            return .dispatched(await dispatcher.dispatch(record, appStates: appStates, receivedAt: Date()))
        } catch {
            return .invalid(error)
        }
    }

    /// Processes `lines`, calling `emit` with each line's offset and result in input order.
    /// - Returns: the number of invalid lines.
    public func run(
        lines: some Sequence<[UInt8]>,
        emit: (_ offset: Int, _ result: LineResult) -> Void
    ) async -> Int {
        await withTaskGroup(of: (Int, LineResult).self) { group in
            var finished: [Int: LineResult] = [:]
            var nextToEmit = 0
            var invalid = 0
            func take(_ completed: (Int, LineResult)) {
                finished[completed.0] = completed.1
                while let result = finished.removeValue(forKey: nextToEmit) {
                    if case .invalid = result { invalid += 1 }
                    emit(nextToEmit, result)
                    nextToEmit += 1
                }
            }
            for (offset, line) in lines.enumerated() {
                // Bound both the work in flight and the results waiting behind a slow line.
                while offset - nextToEmit >= maxConcurrent, let completed = await group.next() {
                    take(completed)
                }
                group.addTask { (offset, await process(line, offset: offset)) }
            }
            while let completed = await group.next() {
                take(completed)
            }
            return invalid
        }
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
