/// Who handles a user's response (the action record's `handledBy`, SEMANTICS section 10).
public enum HandledBy: String, Sendable, Hashable, CaseIterable {
    /// The app receives it.
    case app
    /// The content extension presenting the notification receives it (and may forward it).
    case contentExtension
    /// Nobody: a dismissal the category does not report.
    case none
}
