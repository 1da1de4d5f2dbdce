/// What the user did with a delivered notification: tapped it, dismissed it, picked one of its
/// category's actions, or pressed its content extension's media button (SEMANTICS.md section 10).
public enum ResponseAction: Sendable, Hashable {
    /// The user opened the notification (`com.apple.UNNotificationDefaultActionIdentifier`).
    case defaultAction
    /// The user dismissed it (`com.apple.UNNotificationDismissActionIdentifier`).
    case dismiss
    /// The user picked the category's action with this identifier.
    case custom(String)
    /// The user pressed the media button.
    case media(MediaCommand)

    /// `UNNotificationDefaultActionIdentifier`.
    public static let defaultIdentifier = "com.apple.UNNotificationDefaultActionIdentifier"
    /// `UNNotificationDismissActionIdentifier`.
    public static let dismissIdentifier = "com.apple.UNNotificationDismissActionIdentifier"
    /// Apple's two identifiers, which no action of a category may use.
    package static let reservedIdentifiers: Set<String> = [defaultIdentifier, dismissIdentifier]

    /// The action with `identifier`: Apple's two identifiers are the default and dismiss actions.
    package init(identifier: String) {
        switch identifier {
        case Self.defaultIdentifier: self = .defaultAction
        case Self.dismissIdentifier: self = .dismiss
        default: self = .custom(identifier)
        }
    }

    /// The action identifier as the response carried it; nil for a media command.
    public var identifier: String? {
        switch self {
        case .defaultAction: Self.defaultIdentifier
        case .dismiss: Self.dismissIdentifier
        case .custom(let identifier): identifier
        case .media: nil
        }
    }

    /// The media command; nil for an action.
    public var mediaCommand: MediaCommand? {
        if case .media(let command) = self { return command }
        return nil
    }
}
