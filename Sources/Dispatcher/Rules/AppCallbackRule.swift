/// Which rule of SEMANTICS section 10 chose the app method a forwarded response reaches.
public enum AppCallbackRule: String, Sendable, Hashable, CaseIterable {
    /// The app's `actionHandler` receives it.
    case actionHandler
    /// The default action with a legacy action handler, or in the legacy profile: it is no
    /// "action" and follows section 6's foreground row (FCH, else the legacy method).
    case defaultActionAsNotification
}
