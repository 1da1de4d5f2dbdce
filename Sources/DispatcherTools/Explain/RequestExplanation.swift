package import Dispatcher
package import JSON
package import Notifications

/// The explanation of one request record: each stage the rules took it through, with the facts and
/// the sentences behind each decision, the outcome, lint's warnings and the records produced.
///
/// It is read off the dispatcher's own result (the rejection's failed check, the delivery's
/// reason, app-state source, route, extension report and app-side row): nothing is decided again.
package struct RequestExplanation: Sendable {
    /// The request as received.
    package let record: RequestRecord
    /// What the dispatcher decided, with its output records.
    package let result: DispatchResult
    /// The stages, in the order the rules ran them.
    package let steps: [ExplanationStep]
    /// The outcome in one line, for a person.
    package let outcome: String
    /// The outcome as data.
    package let outcomeFacts: JSONObject
    /// Lint's warnings (none for an invalid request).
    package let warnings: [LintWarning]

    /// Explains `delivery`, the dispatcher's decision for `record` (in `result`) under `configuration`.
    init(record: RequestRecord, delivery: Delivery, result: DispatchResult, configuration: Configuration, warnings: [LintWarning]) {
        self.record = record
        self.result = result
        self.warnings = warnings
        steps = ExplanationStages(configuration: configuration, record: record).steps(of: delivery)
        outcome = Self.outcome(of: delivery)
        outcomeFacts = [
            "kind": "delivery", "disposition": .string(delivery.disposition.rawValue), "reason": .string(delivery.reason.rawValue),
            "appCallback": delivery.appCallback.map { .string($0.rawValue) } ?? .null,
            "launch": delivery.launch.map { .string($0.rawValue) } ?? .null,
            "badgeEffect": .string(delivery.badgeEffect.rawValue),
            "badgeCount": delivery.badgeCount.map { .number(JSONNumber($0)) } ?? .null,
            "presentation": delivery.presentation.map { .string($0.contentExtension) } ?? .null,
            "liveActivity": delivery.liveActivity.map { .string($0.result.rawValue) } ?? .null,
        ]
    }

    /// Explains `deadLetter`, the dispatcher's decision for the request `record` (in `result`):
    /// against the broadcast checks (section 15) when the record is a broadcast.
    init(record: RequestRecord, deadLetter: DeadLetter, result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        warnings = []
        let stages = ExplanationStages(configuration: configuration, record: record)
        let isBroadcast = RequestValidator.isBroadcast(record)
        if isBroadcast, BroadcastCheck.failed(deadLetter.rejection) != nil {
            steps = stages.steps(of: deadLetter.rejection, checks: BroadcastCheck.self)
        } else if !isBroadcast, deadLetter.rejection.reason == .serviceUnavailable {
            // Valid, but the dispatcher's state has no room for it (docs/rules.md, "Memory bound").
            steps = [stages.validation(ValidationCheck.self, failed: nil), stages.outputsRejected(deadLetter.rejection)]
        } else {
            steps = stages.steps(of: deadLetter.rejection, checks: ValidationCheck.self)
        }
        (outcome, outcomeFacts) = ExplanationStages.outcome(of: deadLetter.rejection)
    }

    /// Explains a request to an offline device that was stored (section 16).
    init(record: RequestRecord, stored: StoredNotification, replaced: Delivery?, result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        warnings = []
        let stages = ExplanationStages(configuration: configuration, record: record)
        steps = [stages.validation(ValidationCheck.self, failed: nil), stages.storeAndForward(stored, replaced: replaced)]
        outcome = "Stored for the offline device under \(stored.key)"
            + (replaced.map { "; the notification it replaces is discarded (\($0.reason.rawValue))." } ?? ".")
        outcomeFacts = [
            "kind": "stored", "key": .string(stored.key),
            "replaced": replaced.map { .string($0.reason.rawValue) } ?? .null,
        ]
    }

    /// Explains a valid broadcast (section 15): its checks, then each subscribed activity's result.
    init(record: RequestRecord, broadcast parts: [DispatchResult], result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        warnings = []
        let stages = ExplanationStages(configuration: configuration, record: record)
        steps = [stages.validation(BroadcastCheck.self, failed: nil), stages.broadcast(parts)]
        let results = parts.compactMap { $0.delivery?.liveActivity?.result.rawValue ?? $0.delivery?.reason.rawValue }
        outcome =
            parts.isEmpty
            ? "Broadcast: no activity is subscribed to the channel; no output."
            : "Broadcast to \(parts.count) subscribed activit\(parts.count == 1 ? "y" : "ies"): \(results.joined(separator: ", "))."
        outcomeFacts = ["kind": "broadcast", "activities": .number(JSONNumber(parts.count)), "results": .array(results.map { .string($0) })]
    }

    /// The outcome of a delivery in one line.
    private static func outcome(of delivery: Delivery) -> String {
        let what =
            switch delivery.disposition {
            case .modified: "Delivered modified"
            case .original: "Delivered as sent (original)"
            case .discarded: "Discarded: nothing is shown"
            }
        let callback = delivery.appCallback.map { "the app's \($0.rawValue) is called" } ?? "no app callback"
        let launch = delivery.launch.map { "the app is launched (\($0.rawValue))" } ?? "no launch"
        return "\(what) (reason \(delivery.reason.rawValue)); \(callback); \(launch)."
    }
}
