import Dispatcher
import Notifications

/// Validation checks that run in order, the first failure deciding: a request's
/// (``ValidationCheck``) or a response's (``ResponseCheck``). `explain` lists both the same way.
protocol ExplainedCheck: CaseIterable, Hashable, RawRepresentable<String> where AllCases == [Self] {
    /// What the check asks, for a person.
    var summary: String { get }
    /// The contract's rule behind the check.
    var rule: Citation { get }
    /// Whether it is the check of the bundle ID under `apps`, which passes trivially when `apps` lists none.
    var isTopicAllowed: Bool { get }
    /// The check that gave `rejection`, nil when none did (`OutputRejected`).
    static func failed(_ rejection: Rejection) -> Self?
    /// The contract's sentence on the checks' order.
    static var order: Citation { get }
    /// The contract's sentence on the dead letter an invalid record becomes.
    static var deadLetter: Citation { get }
}

extension ValidationCheck: ExplainedCheck {
    var rule: Citation { .rule(of: self) }
    var isTopicAllowed: Bool { self == .topicAllowed }
    /// The check the validator recorded on the rejection.
    static func failed(_ rejection: Rejection) -> ValidationCheck? { rejection.check }
    static var order: Citation { .checkOrder }
    static var deadLetter: Citation { .oneDeadLetter }
}

extension ResponseCheck: ExplainedCheck {
    var rule: Citation { .rule(of: self) }
    var isTopicAllowed: Bool { self == .topicAllowed }
    /// The check that gives the rejection's reason: each response reason comes from one check.
    static func failed(_ rejection: Rejection) -> ResponseCheck? { ResponseCheck(giving: rejection.reason) }
    static var order: Citation { .responseCheckOrder }
    static var deadLetter: Citation { .oneRecordPerResponse }
}
