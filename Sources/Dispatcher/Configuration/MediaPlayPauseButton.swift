/// A content extension's media button (`UNNotificationContentExtensionMediaPlayPauseButtonType`).
public enum MediaPlayPauseButton: String, Sendable, Hashable, CaseIterable {
    /// No media button (the default).
    case none
    /// The system's standard button.
    case `default`
    /// A button over the content, hidden while playing.
    case overlay
}
