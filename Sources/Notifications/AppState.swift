/// The state of the app on the device, as the `app-state` header may override it.
public enum AppState: String, Sendable, CaseIterable {
    /// On screen.
    case foreground
    /// Running off screen.
    case background
    /// In memory, not running.
    case suspended
    /// Not launched (the default).
    case notRunning
    /// Swiped away by the user.
    case forceQuit
}
