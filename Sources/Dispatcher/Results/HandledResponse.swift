public import Notifications

/// Everything decided for one valid response: the response, what the app declared for it and how
/// it is handled (SEMANTICS section 10).
public struct HandledResponse: Sendable {
    /// The validated response.
    public var response: NotificationResponse
    /// The payload's `aps.category`, nil when it has none.
    public var category: String?
    /// The options the category declares for the action (empty for the default and dismiss
    /// actions and for media commands).
    public var actionOptions: [ActionOption]
    /// The app's state as resolved (header, app-states table, `defaultAppState`, `notRunning`).
    public var appState: AppState
    /// Where the app's state came from.
    public var appStateSource: AppStateSource
    /// The content extension presenting the payload's category (section 7), nil when none: what
    /// the table's "presented" read.
    public var presenter: ContentExtensionSettings?
    /// Who handles it and what follows.
    public var handling: ResponseHandling

    /// Creates a handled response.
    package init(
        response: NotificationResponse, category: String?, actionOptions: [ActionOption], appState: AppState,
        appStateSource: AppStateSource, presenter: ContentExtensionSettings?, handling: ResponseHandling
    ) {
        self.response = response
        self.category = category
        self.actionOptions = actionOptions
        self.appState = appState
        self.appStateSource = appStateSource
        self.presenter = presenter
        self.handling = handling
    }
}
