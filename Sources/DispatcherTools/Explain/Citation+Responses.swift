import Dispatcher
import Notifications

/// The sentences `explain` quotes for users' responses (SEMANTICS section 10), each once, word for
/// word (Markdown marks left out): Apple's from the seed pages named, the contract's from section 10.
extension Citation {
    // MARK: Apple's pages

    /// Who gets a selected action: the content extension's `didReceive(_:completionHandler:)`, else the app.
    static let contentExtensionActions = Citation(
        contentExtensionPage,
        "If your view controller implements the optional didReceive(_:completionHandler:) method, the system calls that method to respond to any selected actions. If your view controller doesn’t implement that method, the system delivers the selected action to your app for handling."
    )
    /// `didReceive(_:completionHandler:)`.
    static let contentExtensionDidReceive = Citation(contentExtensionPage, "Handles a notification action selected by the user.")
    /// `mediaPlay()`.
    static let mediaPlay = Citation(contentExtensionPage, "Tells you to begin playback of your media content.")
    /// `mediaPause()`.
    static let mediaPause = Citation(contentExtensionPage, "Tells you to pause playback of your media content.")
    /// The deprecated action method without response info.
    static let handleAction = Citation(
        legacyDelegatePage, "Tells the app delegate to perform the custom action specified by a remote notification.")
    /// The deprecated action method with response info.
    static let handleActionWithResponseInfo = Citation(
        legacyDelegatePage, "Called when your app has been activated by the user selecting an action from a remote notification.")
    /// `show-view`: the View button opens the app.
    static let showView = Citation(
        legacyDelegatePage,
        "If the value of the show-view key is false, the alert’s View button is not shown. The default is to show the View button which, if the user taps it, launches the app."
    )

    // MARK: The contract (SEMANTICS.md section 10)

    /// The order of the response checks.
    static let responseCheckOrder = Citation(.contract(section: "10"), "Checks, first failure wins, each a dead letter as in section 5:")
    /// Every response ends as one action record or one dead letter.
    static let oneRecordPerResponse = Citation(
        .contract(section: "10"),
        "Every valid response produces exactly one action record, then at most one launch record; every invalid one exactly one dead letter."
    )
    /// The table's order and what "presented" means.
    static let responseRowOrder = Citation(
        .contract(section: "10"),
        "the first row that matches decides; \"presented\" means section 7 gives the payload's category a content extension")
    /// The default action.
    static let defaultAction = Citation(
        .contract(section: "10"), "Tapping the notification is the default action (com.apple.UNNotificationDefaultActionIdentifier);")
    /// When a dismissal is reported.
    static let dismissReported = Citation(
        .contract(section: "10"),
        "dismissing it is reported (com.apple.UNNotificationDismissActionIdentifier) only when the category has the customDismissAction option."
    )
    /// The media button.
    static let mediaButton = Citation(
        .contract(section: "10"), "The content extension's media button (none, default, overlay) sends it mediaPlay() and mediaPause().")
    /// A content extension's answers.
    static let actionResponses = Citation(
        .contract(section: "10"),
        "a map from action id (or default, for actions not listed) to doNotDismiss, dismiss or dismissAndForwardAction; an action listed in neither gets dismissAndForwardAction (decision)."
    )
    /// When the interface closes.
    static let interfaceDismissed = Citation(
        .contract(section: "10"), "interfaceDismissed is false only for doNotDismiss and for media commands.")
    /// The app method per action handler.
    static let actionHandlerCallbacks = Citation(
        .contract(section: "10"),
        "When the action reaches the app (forwarded), appCallback follows actionHandler: userNotificationCenter(_:didReceive:withCompletionHandler:); application(_:handleActionWithIdentifier:forRemoteNotification:withResponseInfo:completionHandler:) (the typed text as UIUserNotificationActionResponseTypedTextKey); application(_:handleActionWithIdentifier:forRemoteNotification:completionHandler:); or null with reason no-handler."
    )
    /// The default action of the legacy handlers and of the legacy profile.
    static let legacyDefaultAction = Citation(
        .contract(section: "10"),
        "With the two legacy handlers, and always in the legacy profile, the default action is no \"action\": it follows the foreground row of section 6 (FCH, else the legacy method)."
    )
    /// Whether the app comes to the foreground.
    static let opensApp = Citation(
        .contract(section: "10"), "opensApp is true for the default action and for a forwarded action with the foreground option.")
    /// The launch a response causes.
    static let responseLaunch = Citation(
        .contract(section: "10"),
        "A forwarded response to an app that is notRunning or forceQuit launches it: a launch record with trigger userOpensNotification when opensApp, else userSelectsBackgroundAction, and launchOptions {\"remoteNotification\": payload}."
    )

    /// The contract's rule behind one response check.
    static func rule(of check: ResponseCheck) -> Citation {
        let text: String
        switch check {
        case .deviceToken: text = "key (MissingDeviceToken, BadDeviceToken)"
        case .topicPresent, .topicIsBundleID, .topicAllowed:
            text = "apns-topic (MissingTopic; a push-type suffix: BadTopic; not a configured app while apps is non-empty: TopicDisallowed)"
        case .appStateHeader: text = "app-state (BadAppState)"
        case .responseShape:
            text = "value a JSON object: notification ({\"apnsId\": UUID, \"payload\": the delivered payload}), and exactly one of actionIdentifier (a non-empty string) and mediaCommand (play or pause); userText (a string) only for a text-input action."
        case .actionOffered:
            text = "then UnknownAction: a custom identifier not declared for the payload's aps.category, userText on an action without text input, a mediaCommand when no content extension with a media button presents the category, and, in the legacy profile, anything but the default action or a default action on an alert whose show-view is false."
        }
        return Citation(.contract(section: "10"), text)
    }

    /// The contract's row of the table of section 10 that `row` names, as the table writes it.
    static func row(of row: ResponseRow) -> Citation {
        let text: String
        switch row {
        case .mediaCommand: text = "1 | mediaCommand | contentExtension | mediaPlay() / mediaPause() | null | false | media-control"
        case .dismissNotReported: text = "2 | dismiss, category without customDismissAction | none | null | null | false | dismiss-not-reported"
        case .contentExtension:
            text = "3 | custom action, presented by a content extension with actionResponses | contentExtension | didReceive(_:completionHandler:) | the configured option | option is dismissAndForwardAction | content-extension"
        case .app:
            text = "4 | anything else (default action, reported dismiss, custom action otherwise) | app | null | null | true | delivered-to-app"
        }
        return Citation(.contract(section: "10"), text)
    }
}
