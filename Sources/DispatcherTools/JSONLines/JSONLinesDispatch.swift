package import Dispatcher
import Foundation
import Notifications
package import Records
import Synchronization

/// Dispatches JSON-lines records offline (the `dispatch` command): requests, responses where a
/// line's `topic` is the responses topic, and state-table records where it is the app-states,
/// devices, channels, activities, stored or badges topic (those update their table for the lines after
/// them, SEMANTICS section 11.2; a devices record that brings a token back online also delivers
/// what was stored for it, section 16.3); a line naming any other topic is invalid
/// (``JSONLines/checkTopic(_:topics:)``). Live Activity commands (sections 14 and 15) are executed
/// at once, in order, so the outputs come in section 19's order.
///
/// Lines are decided in input order, each with its `now` (its `timestamp`, else the wall clock:
/// section 11.1), so table updates and the request limit apply to exactly the lines after them;
/// only service extensions run concurrently, up to a bound, and output lines come out in input
/// order as soon as every earlier line is done, so one slow extension delays only the output
/// behind it.
package struct JSONLinesDispatch: Sendable {
    /// What one input line came to.
    package enum LineResult: Sendable {
        /// A blank line: nothing (it still counts for offsets).
        case blank
        /// A line that is not a record; it produces nothing.
        case invalid(JSONLineError)
        /// The dispatch result of a valid line (a request's or a response's).
        case dispatched(DispatchResult)
        /// A record of a state table's topic: it updated the table (or was ignored, with the
        /// reason for the log) and produces nothing.
        case tableUpdated(ignored: String?)
    }

    /// The dispatcher applying the rules.
    package let dispatcher: Dispatcher
    /// The app-states table, updated by the lines on `topics.appStates`.
    package let appStates: AppStatesTable
    /// The devices table, updated by the lines on `topics.devices`.
    package let devices: DevicesTable
    /// The channels table, updated by the lines on `topics.channels`.
    package let channels: ChannelsTable
    /// The activities table, updated by the lines on `topics.activities` and by the rules.
    package let activities: ActivitiesTable
    /// The stored notifications, updated by the lines on `topics.stored` and by the rules.
    package let stored: StoredNotifications
    /// The badge ledger, updated by the lines on `topics.badges` (a provider's reset) and by the
    /// rules (section 21).
    package let badges: BadgesTable
    /// The tables the rules read: those above, the request counts of `dispatch.tooManyRequests`
    /// and the Live Activity budgets.
    package let tables: StateTables
    /// How many lines may be processed or waiting for output at once.
    package let maxConcurrent: Int

    /// Creates an offline dispatch with empty tables.
    /// - Parameter appStates: the app states the rules read instead of the app-states table (which
    ///   the lines on `topics.appStates` then update unread); nil reads the table.
    package init(dispatcher: Dispatcher, appStates: (any AppStateLookup)? = nil, maxConcurrent: Int = 1_000) {
        self.dispatcher = dispatcher
        let table = AppStatesTable()
        let devices = DevicesTable()
        self.appStates = table
        self.devices = devices
        let dispatch = dispatcher.configuration.dispatch
        let tables = StateTables(
            appStates: appStates ?? table, devices: devices, requestRates: dispatch.tooManyRequests.map(RequestRateWindow.init),
            limits: dispatch.stateLimits)
        // Made just above, so never nil.
        self.channels = tables.channels ?? ChannelsTable()
        self.activities = tables.activities ?? ActivitiesTable()
        self.stored = tables.stored ?? StoredNotifications()
        self.badges = tables.badges ?? BadgesTable()
        self.tables = tables
        self.maxConcurrent = max(1, maxConcurrent)
    }

    /// The source of line `offset` (from 0, blank lines counted): the configured requests topic, partition 0.
    package func source(ofLine offset: Int) -> TopicPartitionOffset {
        TopicPartitionOffset(topic: dispatcher.configuration.topics.requests, partition: 0, offset: Int64(offset))
    }

    /// Processes one line, whatever its topic, and waits for its extension if it needs one.
    package func process(_ line: [UInt8], offset: Int) async -> LineResult {
        switch start(line, offset: offset) {
        case .done(let result): result
        case .waiting(let run): .dispatched(await run())
        }
    }

    /// Whether `line` is a record of a state table's topic (app states, devices, channels,
    /// activities, stored, badges).
    package func isTableRecord(_ line: [UInt8]) -> Bool {
        guard let topic = (try? JSONLines.decode(line, source: source(ofLine: 0)))?.topic else { return false }
        return topic == dispatcher.configuration.topics.devices || table(of: topic) != nil
    }

    /// The table whose topic is `topic`, other than the devices table (whose records may deliver
    /// stored notifications): its name for the log, and how a record updates it (returning why
    /// it was ignored, nil when applied).
    private func table(of topic: String) -> (name: String, apply: (RecordBytes?, RecordBytes?) -> String?)? {
        let topics = dispatcher.configuration.topics
        switch topic {
        case topics.appStates:
            return ("app-states", { key, value in
                guard case .invalid(let reason) = appStates.apply(key: key, value: value) else { return nil }
                return "\(reason)"
            })
        case topics.channels:
            return ("channels", { key, value in
                guard case .invalid(let reason) = channels.apply(key: key, value: value) else { return nil }
                return "\(reason)"
            })
        case topics.activities:
            return ("activities", { key, value in
                guard case .invalid(let reason) = activities.apply(key: key, value: value) else { return nil }
                return "\(reason)"
            })
        case topics.stored:
            return ("stored", { key, value in
                guard case .invalid(let reason) = stored.apply(key: key, value: value) else { return nil }
                return "\(reason)"
            })
        case topics.badges:
            return ("badges", { key, value in
                guard case .invalid(let reason) = badges.apply(key: key, value: value) else { return nil }
                return reason
            })
        default:
            return nil
        }
    }

    /// Reads one line as `run` would before the lines after it (state-table records applied,
    /// requests counted towards the request limit), without running its service extension.
    /// - Returns: the line's result, nil when it would wait on an extension.
    package func replay(_ line: [UInt8], offset: Int) -> LineResult? {
        switch start(line, offset: offset) {
        case .done(let result): result
        case .waiting: nil
        }
    }

    /// What one line starts: a result at once, or service extensions to await.
    private enum Started {
        case done(LineResult)
        case waiting(@Sendable () async -> DispatchResult)
    }

    /// Decides line `offset` as far as it goes without waiting, in input order: decodes it,
    /// applies a state-table record, or prepares a request or response at the line's `now`.
    private func start(_ line: [UInt8], offset: Int) -> Started {
        if JSONLines.isBlank(line) { return .done(.blank) }
        let topics = dispatcher.configuration.topics
        let topic: String?
        var record: RequestRecord
        do {
            (topic, record) = try JSONLines.decode(line, source: source(ofLine: offset))
            try JSONLines.checkTopic(topic, topics: topics)
        } catch {
            return .done(.invalid(error))
        }
        if let topic, topic != topics.devices, let table = table(of: topic) {
            guard let reason = table.apply(record.key, Self.tableValue(line, record)) else { return .done(.tableUpdated(ignored: nil)) }
            return .done(.tableUpdated(ignored: "\(table.name) record ignored: \(reason)"))
        }
        let now = record.timestamp ?? Date()
        if let topic, topic == topics.devices {
            // A devices record that brings a token online delivers what was stored for it (section 16.3).
            let outcome = dispatcher.applyDevicesRecord(
                key: record.key, value: Self.tableValue(line, record), devices: devices, tables: tables, source: record.source, now: now)
            if case .invalid(let reason) = outcome.update { return .done(.tableUpdated(ignored: "devices record ignored: \(reason)")) }
            guard !outcome.steps.isEmpty else { return .done(.tableUpdated(ignored: nil)) }
            return started(outcome.steps, now: now, several: true)
        }
        if topic == topics.responses {
            record.source.topic = topics.responses
            return .done(.dispatched(dispatcher.respond(record, appStates: tables.appStates, receivedAt: now)))
        }
        return started([dispatcher.prepare(record, tables: tables, now: now)], now: now, several: false)
    }

    /// What `steps` start: Live Activity commands are executed at once, in order (offline, every
    /// activity is this process's); results come at once unless an extension must run.
    /// - Parameter several: whether the results are one devices record's (``DispatchResult/Decision/several(_:)``
    ///   even for one), rather than one request's.
    private func started(_ steps: [DispatchStep], now: Date, several: Bool) -> Started {
        let started = StartedSteps(steps) { dispatcher.execute($0, tables: tables, now: now) }
        let combine: @Sendable ([DispatchResult]) -> DispatchResult = { parts in
            several ? DispatchResult(severalOf: parts) : parts[0]
        }
        guard let results = started.results else { return .waiting { combine(await started.finish()) } }
        return .done(.dispatched(combine(results)))
    }

    /// A state record's value: nil (a deletion) for `"value": null` or a line with neither
    /// `value` nor `rawValue`, else the record's bytes.
    private static func tableValue(_ line: [UInt8], _ record: RequestRecord) -> RecordBytes? {
        guard let value = record.value, !value.isEmpty, !value.elementsEqual("null".utf8) else { return nil }
        return value
    }

    /// Processes `lines`, calling `emit` with each line's offset and result in input order.
    /// - Returns: the number of invalid lines.
    package func run(lines: [[UInt8]], emit: @escaping @Sendable (_ offset: Int, _ result: LineResult) -> Void) async -> Int {
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
    package func run(
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
                switch start(line, offset: lineOffset) {
                case .done(let result): emitter.complete(lineOffset, result)
                case .waiting(let run): group.addTask { emitter.complete(lineOffset, .dispatched(await run())) }
                }
            }
            await group.waitForAll()
        }
        return emitter.invalidCount
    }

    /// Splits `data` into lines at `\n` (a trailing `\r` removed); a final newline ends the last line.
    package static func lines(of data: [UInt8]) -> [[UInt8]] {
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
