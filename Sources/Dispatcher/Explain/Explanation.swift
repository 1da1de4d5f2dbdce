public import Notifications

/// What `explain` shows for one input: the path the rules took, and the sentences each decision
/// rests on. One case per kind of input the dispatcher decides; responses (SEMANTICS section 10)
/// get a case of their own.
public enum Explanation: Sendable {
    /// A request record (requests topic).
    case request(RequestExplanation)

    /// The stages, in the order the rules ran them.
    public var steps: [ExplanationStep] {
        switch self {
        case .request(let explanation): explanation.steps
        }
    }

    /// The outcome, for a person, in one line.
    public var outcome: String {
        switch self {
        case .request(let explanation): explanation.outcome
        }
    }

    /// The outcome as data: the same fields the output records carry.
    public var outcomeFacts: JSONObject {
        switch self {
        case .request(let explanation): explanation.outcomeFacts
        }
    }

    /// Lint's warnings about the input.
    public var warnings: [LintWarning] {
        switch self {
        case .request(let explanation): explanation.warnings
        }
    }

    /// The records the dispatcher produced, exactly as `dispatch` writes them.
    public var outputs: [OutputRecord] {
        switch self {
        case .request(let explanation): explanation.result.outputs
        }
    }
}
