import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications
import Records

/// The checks on one input: it is decided as the worker and `dispatch` decide a record (the
/// validator, then the one decision, offline and with empty state tables), and it must end as a
/// decision with its outputs or as a dead letter with its reason; its value's bytes go through
/// ``JSONDifferential``.
///
/// Where a decision waits on a service extension, the check ends there: the rules have decided
/// that the extension runs (sections 3 and 4), and what an extension makes is not the record's
/// bytes. A Live Activity's commands (section 14) are executed, as `dispatch` does at once.
enum RecordCheck {
    /// Reasons that only the validator gives (sections 1 and 2): a record the validator accepts
    /// is never dead-lettered for one of them.
    static let validationReasons: Set<RejectionReason> = [
        .duplicateHeaders, .missingDeviceToken, .missingTopic, .invalidPushType, .badMessageId, .badExpirationDate,
        .badCollapseId, .payloadEmpty, .payloadTooLarge, .invalidPayload, .badAppState,
    ]

    /// Checks `input` whole.
    static func check(_ input: FuzzInput, findings: inout Findings) {
        switch input {
        case .record(let record, let index):
            checkRecord(record, dispatcher: FuzzDispatchers.all[index], validator: FuzzDispatchers.validators[index], findings: &findings)
        case .lines(let lines):
            checkLines(lines, findings: &findings)
        }
    }

    /// One framed record, decided by `dispatcher` at ``FuzzDispatchers/now``, and validated by
    /// `validator` (of the same configuration) on its own.
    static func checkRecord(_ record: RequestRecord, dispatcher: Dispatcher, validator: RequestValidator, findings: inout Findings) {
        if let value = record.value, !value.isEmpty { JSONDifferential.check(value.array, findings: &findings) }
        let now = FuzzDispatchers.now
        let tables = freshTables(for: dispatcher)
        let result: DispatchResult?
        switch dispatcher.prepare(record, tables: tables, now: now) {
        case .decided(let decided): result = decided
        case .activity(let work): result = dispatcher.execute(work, tables: tables, now: now)
        case .extensionNeeded: result = nil
        }
        if let result { checkResult(result, request: record, topics: dispatcher.configuration.topics, findings: &findings) }

        // The validator's own verdict on the owned record: its rejection is the dead letter's reason.
        let reasons = result.map { $0.parts.compactMap(\.rejectionReason) } ?? []
        switch validator.validateAny(record, receivedAt: now) {
        case .rejectedRequest(let rejection), .rejectedBroadcast(let rejection):
            if reasons != [rejection.reason] {
                findings.fail("the validator refuses the record (\(rejection)), the dispatcher decides \(describe(result))")
            }
        case .request, .broadcast:
            if let reason = reasons.first(where: validationReasons.contains) {
                findings.fail("the validator accepts the record, the dispatcher dead-letters it for \(reason.rawValue)")
            }
        }
    }

    /// JSON lines, each processed in order by a fresh offline `dispatch` on the sample
    /// configuration (state-table lines update the tables for the lines after them).
    static func checkLines(_ lines: [[UInt8]], findings: inout Findings) {
        let dispatch = JSONLinesDispatch(dispatcher: FuzzDispatchers.all[0], maxConcurrent: 1)
        let topics = dispatch.dispatcher.configuration.topics
        for (offset, line) in lines.enumerated() {
            let decoded = try? JSONLines.decode(line, source: dispatch.source(ofLine: offset))
            if let value = decoded?.record.value, !value.isEmpty { JSONDifferential.check(value.array, findings: &findings) }
            // nil: it waits on its service extension, where the check ends.
            guard case .dispatched(let result)? = dispatch.replay(line, offset: offset) else { continue }
            // A request's or a response's dead letter keeps its record; what a devices record
            // delivers is the stored notifications'.
            let isOwn = decoded.map { $0.topic == nil || $0.topic == topics.requests || $0.topic == topics.responses } ?? false
            checkResult(result, request: isOwn ? decoded?.record : nil, topics: topics, findings: &findings)
        }
    }

    /// Tables as `dispatch` starts with: empty, bounded by the configuration's limits.
    static func freshTables(for dispatcher: Dispatcher) -> StateTables {
        let settings = dispatcher.configuration.dispatch
        return StateTables(
            appStates: NoAppStates(), devices: DevicesTable(), requestRates: settings.tooManyRequests.map(RequestRateWindow.init),
            limits: settings.stateLimits)
    }

    /// Every part of a result ends as it must: a delivery, a handled response or a stored
    /// notification with its outputs, or a dead letter with its reason; every JSON output parses.
    /// - Parameters:
    ///   - request: the record decided, when the result is its own (a dead letter keeps it).
    ///   - topics: the configuration's topics.
    static func checkResult(_ result: DispatchResult, request: RequestRecord?, topics: TopicSettings, findings: inout Findings) {
        for part in result.parts {
            let outputs = part.outputs
            switch part.decision {
            case .delivered(let delivery):
                guard outputs.first?.kind == .delivery else { return findings.fail("a delivery whose first output is \(kinds(outputs))") }
                checkDelivery(outputs[0], delivery, topics: topics, findings: &findings)
            case .deadLettered(let deadLetter):
                guard let first = outputs.first, first.kind == .deadLetter else {
                    return findings.fail("a dead letter whose first output is \(kinds(outputs))")
                }
                checkDeadLetter(first, deadLetter.rejection, request: request, findings: &findings)
            case .handled, .stored:
                if outputs.isEmpty { findings.fail("a \(part.decision) without outputs") }
            case .several:
                findings.fail("a result's parts hold several decisions")
            }
            for output in outputs where output.kind != .deadLetter {
                guard let value = output.value else { continue }
                if (try? JSONValue(parsing: value, maxDepth: 4 * JSONValue.maximumDepth)) == nil {
                    findings.fail("the \(output.kind) output's value is not JSON: \(JSONDifferential.text(value.array))")
                }
            }
        }
    }

    /// The delivery record written from the request's bytes (the worker's writer) is the one
    /// written from the delivery the decision describes (the writer of deliveries that waited, held
    /// to `DeliveryJSON`'s tree by DeliveryBytesTests): the same payload, compacted, a ledger's
    /// badge and count (section 21) included.
    static func checkDelivery(_ output: OutputRecord, _ delivery: Delivery, topics: TopicSettings, findings: inout Findings) {
        let described = DispatchResult(.delivered(delivery), topics: topics).outputs.first
        if output.value != described?.value {
            findings.fail(
                "the delivery record \(JSONDifferential.text(output.value?.array ?? [])) is not the delivery described, \(JSONDifferential.text(described?.value?.array ?? []))")
        }
    }

    /// A dead letter names its reason and the reason's status, says why, and keeps the request's
    /// key and value bytes unchanged.
    static func checkDeadLetter(_ output: OutputRecord, _ rejection: Rejection, request: RequestRecord?, findings: inout Findings) {
        let reason = output.headers.last { $0.name == "dlq-reason" }?.value.map { String(decoding: $0, as: UTF8.self) }
        if reason != rejection.reason.rawValue {
            findings.fail("a dead letter for \(rejection.reason.rawValue) whose dlq-reason is \(reason ?? "missing")")
        }
        if rejection.detail.isEmpty { findings.fail("a dead letter for \(rejection.reason.rawValue) without a detail") }
        let statusAllowed = rejection.status == rejection.reason.status || (rejection.reason == .outputRejected && rejection.status == 413)
        if !statusAllowed { findings.fail("a dead letter for \(rejection.reason.rawValue) with the status \(rejection.status)") }
        guard let request else { return }
        if output.value != request.value || output.key != request.key {
            findings.fail("a dead letter for \(rejection.reason.rawValue) does not keep the request's key and value")
        }
    }

    private static func kinds(_ outputs: [OutputRecord]) -> String {
        outputs.isEmpty ? "missing" : outputs.map(\.kind.description).joined(separator: ", ")
    }

    private static func describe(_ result: DispatchResult?) -> String {
        guard let result else { return "that a service extension runs" }
        return result.parts.map { part in
            if let reason = part.rejectionReason { return "a dead letter for \(reason.rawValue)" }
            return part.delivery.map { "a delivery (\($0.disposition), \($0.reason))" } ?? "\(part.decision)"
        }.joined(separator: ", ")
    }
}
