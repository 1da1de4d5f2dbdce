package import Dispatcher
package import JSON
package import Notifications

/// The explanation of one response record (SEMANTICS section 10): each check, who handles it and
/// why the earlier rows of the table did not, what the content extension answers, what reaches the
/// app and whether it is launched, with the sentences behind each decision and the records produced.
///
/// It is read off the dispatcher's own result (the dead letter's reason, the handling's row,
/// response option and its source, callback rule, and the app's state and its source): nothing is
/// decided again.
package struct ResponseExplanation: Sendable {
    /// The response as received.
    package let record: RequestRecord
    /// What the dispatcher decided, with its output records.
    package let result: DispatchResult
    /// The stages, in the order the rules ran them.
    package let steps: [ExplanationStep]
    /// The outcome in one line, for a person.
    package let outcome: String
    /// The outcome as data.
    package let outcomeFacts: JSONObject

    /// Explains `handled`, the dispatcher's decision for `record` (in `result`) under `configuration`.
    init(record: RequestRecord, handled: HandledResponse, result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        steps = ExplanationStages(configuration: configuration, record: record).steps(of: handled)
        let handling = handled.handling
        outcome = Self.outcome(of: handling)
        outcomeFacts = [
            "kind": "action", "row": .number(JSONNumber(handling.row.number)), "handledBy": .string(handling.handledBy.rawValue),
            "reason": .string(handling.reason.rawValue), "contentExtension": .string(orNull: handling.contentExtension),
            "extensionCallback": .string(orNull: handling.extensionCallback?.rawValue),
            "responseOption": .string(orNull: handling.responseOption?.rawValue), "interfaceDismissed": .bool(handling.interfaceDismissed),
            "forwardedToApp": .bool(handling.forwardedToApp), "appCallback": .string(orNull: handling.appCallback?.rawValue),
            "opensApp": .bool(handling.opensApp), "launch": .string(orNull: handling.launch?.rawValue),
        ]
    }

    /// Explains `deadLetter`, the dispatcher's decision for the response `record` (in `result`).
    init(record: RequestRecord, deadLetter: DeadLetter, result: DispatchResult, configuration: Configuration) {
        self.record = record
        self.result = result
        steps = ExplanationStages(configuration: configuration, record: record).steps(of: deadLetter.rejection, checks: ResponseCheck.self)
        (outcome, outcomeFacts) = ExplanationStages.outcome(of: deadLetter.rejection)
    }

    /// The outcome of a handled response in one line: who, what the extension answered, what
    /// reached the app, the launch.
    private static func outcome(of handling: ResponseHandling) -> String {
        var parts: [String] = []
        switch handling.handledBy {
        case .app: parts.append("Handled by the app (reason \(handling.reason.rawValue))")
        case .contentExtension:
            parts.append("Handled by the content extension \(handling.contentExtension ?? "?") (reason \(handling.reason.rawValue))")
        case .none: parts.append("Handled by nobody (reason \(handling.reason.rawValue))")
        }
        if let callback = handling.extensionCallback {
            parts.append("its \(callback.rawValue) is called" + (handling.responseOption.map { " and answers \($0.rawValue)" } ?? ""))
        }
        parts.append(handling.interfaceDismissed ? "the notification's interface closes" : "the notification's interface stays open")
        if handling.forwardedToApp {
            parts.append(handling.appCallback.map { "the app's \($0.rawValue) is called" } ?? "it reaches the app, but no method receives it")
            if handling.opensApp { parts.append("the app comes to the foreground") }
        } else {
            parts.append("nothing reaches the app")
        }
        parts.append(handling.launch.map { "the app is launched (\($0.rawValue))" } ?? "no launch")
        return parts.joined(separator: "; ") + "."
    }
}
