/// A content extension's answers to actions, present when its view controller implements
/// `didReceive(_:completionHandler:)` (SEMANTICS section 10): per action id, else the `default`
/// entry, else `dismissAndForwardAction`.
public struct ActionResponses: Sendable, Hashable {
    /// The key that answers for every action not listed.
    package static let fallbackKey = "default"

    /// Answers by action id.
    public var byAction: [String: ResponseOption]
    /// The `default` entry: the answer for actions not listed.
    public var fallback: ResponseOption?

    /// Creates the answers.
    public init(byAction: [String: ResponseOption] = [:], fallback: ResponseOption? = nil) {
        self.byAction = byAction
        self.fallback = fallback
    }

    /// Where an answer comes from.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// The action's own entry.
        case action
        /// The `default` entry: the action is not listed.
        case fallback
        /// Neither: the contract's `dismissAndForwardAction`.
        case contract
    }

    /// The answer for the action `id`.
    package func option(for id: String) -> ResponseOption { answer(for: id).option }

    /// The answer for the action `id`, and which entry gave it.
    package func answer(for id: String) -> (option: ResponseOption, source: Source) {
        if let option = byAction[id] { return (option, .action) }
        if let fallback { return (fallback, .fallback) }
        return (.dismissAndForwardAction, .contract)
    }
}
