/// The row of SEMANTICS section 10's table that decided who handles a response: the first row that
/// matches the response, the payload's category and the content extension presenting it.
public enum ResponseRow: String, Sendable, Hashable, CaseIterable {
    /// Row 1: a media command, for the content extension's media methods.
    case mediaCommand = "media-command"
    /// Row 2: a dismissal the category does not report (no `customDismissAction`).
    case dismissNotReported = "dismiss-not-reported"
    /// Row 3: a custom action of a category presented by a content extension with `actionResponses`.
    case contentExtension = "content-extension"
    /// Row 4: anything else, for the app.
    case app

    /// The row's number in the table (from 1).
    package var number: Int { (Self.allCases.firstIndex(of: self) ?? 0) + 1 }

    /// The row's condition as the contract's table writes it, for a person.
    package var condition: String {
        switch self {
        case .mediaCommand: "a mediaCommand"
        case .dismissNotReported: "a dismissal, category without customDismissAction"
        case .contentExtension: "a custom action, presented by a content extension with actionResponses"
        case .app: "anything else (the default action, a reported dismissal, a custom action otherwise)"
        }
    }
}
