public import Notifications

/// What the user sees of a delivery (SEMANTICS section 17): the interruption level, Focus, the
/// foreground's `willPresent` and what is shown and heard.
public struct UserAlert: Sendable, Hashable {
    /// How Focus treats the notification (section 17.2).
    public enum FocusEffect: String, Sendable, Hashable, CaseIterable {
        /// No Focus is on.
        case off
        /// A Focus is on and allows the app.
        case allowed
        /// A Focus silences the app, but the level breaks through it.
        case breakthrough
        /// A Focus silences the notification.
        case silenced
    }

    /// The interruption level in effect (an unentitled `time-sensitive` or `critical` is `active`).
    public var interruptionLevel: InterruptionLevel
    /// How Focus treats it.
    public var focus: FocusEffect
    /// Whether the app's `willPresent` method is called (in the foreground, when implemented).
    public var willPresentCalled: Bool
    /// The options `willPresent` passes, `[]` when it is not implemented; nil outside the foreground.
    public var options: [PresentationOption]?
    /// Whether a banner is shown.
    public var banner: Bool
    /// Whether it is added to the notification list.
    public var list: Bool
    /// Whether the sound plays.
    public var sound: Bool

    /// The name of the method `willPresent` stands for.
    package static let willPresentMethod = "userNotificationCenter(_:willPresent:withCompletionHandler:)"

    /// Makes the value from its fields.
    package init(
        interruptionLevel: InterruptionLevel, focus: FocusEffect, willPresentCalled: Bool, options: [PresentationOption]?,
        banner: Bool, list: Bool, sound: Bool
    ) {
        self.interruptionLevel = interruptionLevel
        self.focus = focus
        self.willPresentCalled = willPresentCalled
        self.options = options
        self.banner = banner
        self.list = list
        self.sound = sound
    }
}
