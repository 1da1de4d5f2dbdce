package import Dispatcher
package import JSON
import Notifications

/// What `explain` shows for one input: the path the rules took, and the sentences each decision
/// rests on. One case per kind of input the dispatcher decides.
package enum Explanation: Sendable {
    /// A request record (requests topic).
    case request(RequestExplanation)
    /// A user's response (responses topic, SEMANTICS section 10).
    case response(ResponseExplanation)

    /// Explains `result`, what the dispatcher decided for `record`: a delivery is a request's, a
    /// handled response a response's, and a dead letter is either, as `isResponse` says (the
    /// dispatcher's own ``Dispatcher/isResponse(_:)``).
    /// - Parameter warnings: lint's warnings on a delivered request.
    init(record: RequestRecord, isResponse: Bool, result: DispatchResult, configuration: Configuration, warnings: [LintWarning]) {
        switch result.decision {
        case .delivered(let delivery):
            self = .request(
                RequestExplanation(record: record, delivery: delivery, result: result, configuration: configuration, warnings: warnings))
        case .handled(let handled):
            self = .response(ResponseExplanation(record: record, handled: handled, result: result, configuration: configuration))
        case .deadLettered(let deadLetter) where isResponse:
            self = .response(ResponseExplanation(record: record, deadLetter: deadLetter, result: result, configuration: configuration))
        case .deadLettered(let deadLetter):
            self = .request(RequestExplanation(record: record, deadLetter: deadLetter, result: result, configuration: configuration))
        case .stored(let stored, let replaced):
            self = .request(
                RequestExplanation(record: record, stored: stored, replaced: replaced, result: result, configuration: configuration))
        case .several(let parts):
            self = .request(RequestExplanation(record: record, broadcast: parts, result: result, configuration: configuration))
        }
    }

    /// The stages, in the order the rules ran them.
    package var steps: [ExplanationStep] {
        switch self {
        case .request(let explanation): explanation.steps
        case .response(let explanation): explanation.steps
        }
    }

    /// The outcome, for a person, in one line.
    package var outcome: String {
        switch self {
        case .request(let explanation): explanation.outcome
        case .response(let explanation): explanation.outcome
        }
    }

    /// The outcome as data: the same fields the output records carry.
    package var outcomeFacts: JSONObject {
        switch self {
        case .request(let explanation): explanation.outcomeFacts
        case .response(let explanation): explanation.outcomeFacts
        }
    }

    /// Lint's warnings about the input (lint reads requests' payloads only).
    package var warnings: [LintWarning] {
        switch self {
        case .request(let explanation): explanation.warnings
        case .response: []
        }
    }

    /// What the dispatcher decided, with the records it produced.
    package var result: DispatchResult {
        switch self {
        case .request(let explanation): explanation.result
        case .response(let explanation): explanation.result
        }
    }

    /// Whether the input was a response (the dispatcher decided it as one).
    package var isResponse: Bool {
        if case .response = self { return true }
        return false
    }

    /// The records the dispatcher produced, exactly as `dispatch` writes them.
    package var outputs: [OutputRecord] { result.outputs }
}
