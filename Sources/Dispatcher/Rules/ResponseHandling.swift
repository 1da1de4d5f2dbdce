import Notifications

/// What follows a user's response (SEMANTICS section 10): who handles it, what the content
/// extension is asked and answers, whether the interface closes, which app method receives it,
/// whether the app opens, and the launch.
public struct ResponseHandling: Sendable, Hashable {
    /// The app, the content extension, or nobody.
    public var handledBy: HandledBy
    /// The name of the content extension that handled the response, nil otherwise.
    public var contentExtension: String?
    /// The content extension method called, nil when none.
    public var extensionCallback: ExtensionCallback?
    /// What the content extension answered to a custom action, nil otherwise.
    public var responseOption: ResponseOption?
    /// Whether the notification's interface closes (false only for `doNotDismiss` and media commands).
    public var interfaceDismissed: Bool
    /// Whether the action reaches the app.
    public var forwardedToApp: Bool
    /// The app method called, nil when none.
    public var appCallback: AppCallback?
    /// Whether the app comes to the foreground.
    public var opensApp: Bool
    /// Why it is handled so.
    public var reason: ActionReason
    /// The launch, nil when the app is not launched.
    public var launch: LaunchTrigger?
    /// The row of the table that decided who handles it (for `explain`).
    public var row: ResponseRow
    /// Which entry of the content extension's `actionResponses` gave `responseOption`, nil when
    /// there is no option (for `explain`).
    public var responseOptionSource: ActionResponses.Source?
    /// The rule that chose `appCallback`, nil when the response does not reach the app (for `explain`).
    public var appCallbackRule: AppCallbackRule?

    /// A handling that reaches no app method and launches nothing; forwarding fills those in.
    init(
        row: ResponseRow,
        handledBy: HandledBy,
        reason: ActionReason,
        contentExtension: String? = nil,
        extensionCallback: ExtensionCallback? = nil,
        responseOption: (option: ResponseOption, source: ActionResponses.Source)? = nil,
        interfaceDismissed: Bool = true,
        forwardedToApp: Bool = false
    ) {
        self.row = row
        self.handledBy = handledBy
        self.reason = reason
        self.contentExtension = contentExtension
        self.extensionCallback = extensionCallback
        self.responseOption = responseOption?.option
        self.responseOptionSource = responseOption?.source
        self.appCallbackRule = nil
        self.interfaceDismissed = interfaceDismissed
        self.forwardedToApp = forwardedToApp
        self.appCallback = nil
        self.opensApp = false
        self.launch = nil
    }

    /// Decides for a valid, known `action` (the dispatcher has refused unknown ones).
    ///
    /// - Parameters:
    ///   - declared: the category's declaration of a custom action (its options decide `opensApp`).
    ///   - category: the settings of the payload's category, nil when it has none.
    ///   - presenter: the content extension presenting the category (nil in the legacy profile).
    ///   - state: the app's state as resolved for the response.
    static func decide(
        _ action: ResponseAction,
        declared: NotificationAction?,
        category: CategorySettings?,
        presenter: ContentExtensionSettings?,
        profile: Profile,
        state: AppState,
        app: AppSettings
    ) -> ResponseHandling {
        // The table of section 10: the first row that matches decides.
        var handling: ResponseHandling
        switch action {
        case .media(let command):
            return ResponseHandling(
                row: .mediaCommand, handledBy: .contentExtension, reason: .mediaControl, contentExtension: presenter?.name,
                extensionCallback: command == .play ? .mediaPlay : .mediaPause, interfaceDismissed: false)
        case .dismiss where !(category?.reportsDismiss ?? false):
            return ResponseHandling(row: .dismissNotReported, handledBy: .none, reason: .dismissNotReported)
        case .custom(let id):
            if let presenter, let responses = presenter.actionResponses {
                let answer = responses.answer(for: id)
                handling = ResponseHandling(
                    row: .contentExtension, handledBy: .contentExtension, reason: .contentExtension,
                    contentExtension: presenter.name, extensionCallback: .didReceive, responseOption: answer,
                    interfaceDismissed: answer.option != .doNotDismiss, forwardedToApp: answer.option == .dismissAndForwardAction)
            } else {
                handling = ResponseHandling(row: .app, handledBy: .app, reason: .deliveredToApp, forwardedToApp: true)
            }
        case .defaultAction, .dismiss:
            handling = ResponseHandling(row: .app, handledBy: .app, reason: .deliveredToApp, forwardedToApp: true)
        }
        guard handling.forwardedToApp else { return handling }

        (handling.appCallback, handling.appCallbackRule) = appCallback(for: action, profile: profile, app: app)
        if handling.appCallback == nil { handling.reason = .noHandler }
        handling.opensApp = action == .defaultAction || declared?.options.contains(.foreground) == true
        if state == .notRunning || state == .forceQuit {
            handling.launch = handling.opensApp ? .userOpensNotification : .userSelectsBackgroundAction
        }
        return handling
    }

    /// The app method an action reaches, and the rule that chose it: the action handler's, except
    /// the default action of the legacy handlers and of the legacy profile, which is no action and
    /// follows section 6's foreground row.
    private static func appCallback(
        for action: ResponseAction, profile: Profile, app: AppSettings
    ) -> (AppCallback?, AppCallbackRule) {
        if action == .defaultAction, profile == .legacy || app.actionHandler.isLegacy {
            return (AppSideDecision.foregroundCallback(profile: profile, delegate: app.appDelegate), .defaultActionAsNotification)
        }
        let callback: AppCallback? =
            switch app.actionHandler {
            case .userNotificationCenter: .userNotificationCenter
            case .legacyWithResponseInfo: .handleActionWithResponseInfo
            case .legacy: .handleAction
            case .none: nil
            }
        return (callback, .actionHandler)
    }
}
