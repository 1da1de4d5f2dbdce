public import JSON
public import Notifications

/// The explanation of one request record: each stage the rules took it through, with the facts and
/// the sentences behind each decision, the outcome, lint's warnings and the records produced.
///
/// It is read off the dispatcher's own result (the rejection's failed check, the delivery's
/// reason, app-state source, route, extension report and app-side row): nothing is decided again.
public struct RequestExplanation: Sendable {
    /// The request as received.
    public let record: RequestRecord
    /// What the dispatcher decided, with its output records.
    public let result: DispatchResult
    /// The stages, in the order the rules ran them.
    public let steps: [ExplanationStep]
    /// The outcome in one line, for a person.
    public let outcome: String
    /// The outcome as data.
    public let outcomeFacts: JSONObject
    /// Lint's warnings (none for an invalid request).
    public let warnings: [LintWarning]

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
            "presentation": delivery.presentation.map { .string($0.contentExtension) } ?? .null,
        ]
    }

    /// Explains `deadLetter`, the dispatcher's decision for the request `record` (in `result`).
    init(record: RequestRecord, deadLetter: DeadLetter, result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        warnings = []
        let stages = ExplanationStages(configuration: configuration, record: record)
        steps = stages.steps(of: deadLetter.rejection, checks: ValidationCheck.self)
        (outcome, outcomeFacts) = ExplanationStages.outcome(of: deadLetter.rejection)
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
