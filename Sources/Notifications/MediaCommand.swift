/// What the user did with a content extension's media button (SEMANTICS.md section 10).
public enum MediaCommand: String, Sendable, Hashable, CaseIterable {
    /// The extension's `mediaPlay()` is called.
    case play
    /// The extension's `mediaPause()` is called.
    case pause
}
