public import Foundation
public import Notifications

extension Dispatcher {
    /// Decides one response record (SEMANTICS section 10): its action record, then its launch when
    /// the app is launched; or its dead letter. Nothing in it waits, so it is decided at once.
    /// - Parameters:
    ///   - record: the response as received.
    ///   - appStates: the app-states table (section 9).
    ///   - receivedAt: when the record was received, reported as `receivedAt`.
    public func respond(_ record: RequestRecord, appStates: any AppStateLookup, receivedAt: Date) -> DispatchResult {
        let response: NotificationResponse
        switch responseValidator.validate(record, receivedAt: receivedAt) {
        case .failure(let rejection): return deadLettered(record, rejection)
        case .success(let valid): response = valid
        }
        let profile = configuration.dispatch.profile
        let app = apps[response.bundleID]
        let category = response.payload.category
        let categorySettings = category.flatMap { app?.settings.categories[$0] }
        // "Presented" is section 7's rule: content extensions exist in the modern profile only.
        let presenter = profile == .modern ? category.flatMap { app?.presenters[$0] } : nil
        let declared: NotificationAction? =
            if case .custom(let id) = response.action { categorySettings?.action(id) } else { nil }
        if let rejection = Self.unknownAction(
            response, category: category, declared: declared, presenter: presenter, profile: profile)
        {
            return deadLettered(record, rejection)
        }
        let (appState, appStateSource) = AppStateSource.resolve(
            override: response.appStateOverride, deviceToken: response.deviceToken, appStates: appStates,
            appDefault: app?.settings.defaultAppState)
        let handling = ResponseHandling.decide(
            response.action, declared: declared, category: categorySettings, presenter: presenter, profile: profile,
            state: appState, app: app?.settings ?? AppSettings())
        let handled = HandledResponse(
            response: response, category: category, actionOptions: declared?.options ?? [], appState: appState,
            appStateSource: appStateSource, presenter: presenter, handling: handling)
        return fitted(DispatchResult(.handled(handled), topics: configuration.topics, limit: outputLimit), record: record)
    }

    /// `UnknownAction` (section 10): why the notification does not offer what the response names,
    /// nil when it does.
    /// - Parameters:
    ///   - category: the payload's `aps.category`.
    ///   - declared: the category's declaration of the response's custom action, if any.
    ///   - presenter: the content extension presenting the category, if any.
    static func unknownAction(
        _ response: NotificationResponse, category: String?, declared: NotificationAction?,
        presenter: ContentExtensionSettings?, profile: Profile
    ) -> Rejection? {
        let action = response.action
        let ofCategory = category.map { "the category \(MessageText.quote($0)) of \(MessageText.quote(response.bundleID))" }
        if profile == .legacy {
            guard action == .defaultAction else {
                return Rejection(
                    .unknownAction,
                    "In the legacy profile the only response is the default action (opening the notification), not \(describe(action)).")
            }
            if response.payload.hidesViewButton {
                return Rejection(
                    .unknownAction,
                    "The notification's alert has show-view false: it has no View button, so the user cannot open it (legacy profile).")
            }
        }
        switch action {
        case .custom(let id):
            guard let declared else {
                return Rejection(
                    .unknownAction,
                    "The action \(MessageText.quote(id)) is not declared for \(ofCategory ?? "a notification without category (aps.category)").")
            }
            if response.userText != nil, declared.textInput == nil {
                return Rejection(.unknownAction, "The response has userText, but the action \(MessageText.quote(id)) has no text input.")
            }
        case .defaultAction, .dismiss:
            if response.userText != nil {
                return Rejection(.unknownAction, "The response has userText, but \(describe(action)) has no text input.")
            }
        case .media(let command):
            guard let presenter, presenter.mediaPlayPauseButton != .none else {
                return Rejection(
                    .unknownAction,
                    "The media command \(command.rawValue) needs a content extension with a media button presenting \(ofCategory ?? "the notification, which has no category (aps.category)"); there is none.")
            }
        }
        return nil
    }

    /// The action in words, for dead-letter details.
    private static func describe(_ action: ResponseAction) -> String {
        switch action {
        case .defaultAction: "the default action"
        case .dismiss: "the dismiss action"
        case .custom(let id): "the action \(MessageText.quote(id))"
        case .media(let command): "the media command \(command.rawValue)"
        }
    }
}
