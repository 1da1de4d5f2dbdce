import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// Building blocks of the response tests (SEMANTICS section 10): a chat app whose categories have
/// actions and content extensions of every kind, and the values of responses to it (the records
/// are ``TestRecord``s from ``TestRecord/responsesTopic``).
enum ResponseFixture {
    /// The app every response test configures.
    static let bundleID = "com.example.chat"
    /// The notification the responses answer.
    static let notificationID = "6f1c2a3e-0000-4000-8000-00000000000a"

    /// The chat app with `actionHandler`, `appDelegate` and `profile`:
    /// - `MESSAGE` (customDismissAction): LIKE, REPLY (text input, foreground), ARCHIVE (destructive);
    ///   presented by `ChatThread`, which keeps LIKE open, ends ARCHIVE and forwards the rest (its default entry);
    /// - `INBOX`: READ, DELETE (destructive); presented by `Inbox`, which answers only READ;
    /// - `VIDEO`: SAVE, OPEN (foreground); presented by `VideoPlayer`, with a media button and no actionResponses;
    /// - `PLAIN`: ACK, VIEW (foreground, authenticationRequired); no content extension.
    static func yaml(
        handler: ActionHandler = .userNotificationCenter,
        delegate: AppDelegateMethods = .fetchCompletionHandler,
        profile: Profile = .modern
    ) -> String {
        """
        dispatch: {profile: \(profile.rawValue)}
        apps:
          \(bundleID):
            appDelegate: \(delegate.rawValue)
            actionHandler: \(handler.rawValue)
            categories:
              MESSAGE:
                options: [customDismissAction]
                actions:
                  - {id: LIKE, title: Like}
                  - {id: REPLY, title: Reply, options: [foreground], textInput: {buttonTitle: Send, placeholder: Message}}
                  - {id: ARCHIVE, title: Archive, options: [destructive]}
              INBOX:
                actions:
                  - {id: READ, title: Mark as read}
                  - {id: DELETE, title: Delete, options: [destructive]}
              VIDEO:
                actions:
                  - {id: SAVE, title: Save}
                  - {id: OPEN, title: Open, options: [foreground]}
              PLAIN:
                actions:
                  - {id: ACK, title: OK}
                  - {id: VIEW, title: View, options: [foreground, authenticationRequired]}
            contentExtensions:
              - name: ChatThread
                categories: MESSAGE
                initialContentSizeRatio: 1
                actionResponses: {LIKE: doNotDismiss, ARCHIVE: dismiss, default: dismissAndForwardAction}
              - name: Inbox
                categories: INBOX
                initialContentSizeRatio: 0.5
                actionResponses: {READ: doNotDismiss}
              - name: VideoPlayer
                categories: VIDEO
                initialContentSizeRatio: 0.5625
                mediaPlayPauseButton: overlay
        """
    }

    /// What the user did, as the response record names it.
    enum Act: Sendable, CustomStringConvertible {
        /// `actionIdentifier`; `default` and `dismiss` stand for Apple's identifiers.
        case action(String)
        /// `mediaCommand`.
        case media(String)

        var description: String {
            switch self {
            case .action(let id): id
            case .media(let command): "media \(command)"
            }
        }
    }

    /// The delivered payload of a notification of `category` (an alert, with `alert` extra keys).
    static func payload(category: String?, alert: JSONObject = JSONObject()) -> JSONValue {
        var alertObject = JSONObject([("title", "Anna"), ("body", "Lunch?")])
        for (key, value) in alert { alertObject[key] = value }
        var aps = JSONObject([("alert", .object(alertObject))])
        if let category { aps["category"] = .string(category) }
        return .object(JSONObject([("aps", .object(aps)), ("threadId", "t-9")]))
    }

    /// The response value: the notification, what the user did and the text typed.
    static func value(_ act: Act, userText: String? = nil, payload: JSONValue) -> JSONValue {
        var object = JSONObject([
            ("notification", .object(JSONObject([("apnsId", .string(notificationID)), ("payload", payload)])))
        ])
        switch act {
        case .action("default"): object["actionIdentifier"] = .string(ResponseAction.defaultIdentifier)
        case .action("dismiss"): object["actionIdentifier"] = .string(ResponseAction.dismissIdentifier)
        case .action(let id): object["actionIdentifier"] = .string(id)
        case .media(let command): object["mediaCommand"] = .string(command)
        }
        if let userText { object["userText"] = .string(userText) }
        return .object(object)
    }

    /// Decides a response to a notification of `category` in the app configured by `yaml`.
    static func respond(
        _ act: Act,
        category: String?,
        userText: String? = nil,
        alert: JSONObject = JSONObject(),
        state: AppState = .foreground,
        yaml: String = yaml(),
        appStates: any AppStateLookup = NoAppStates()
    ) throws -> DispatchResult {
        let dispatcher = try Dispatcher(configuration: Configuration(yaml: yaml), registry: ExtensionRegistry())
        let value = value(act, userText: userText, payload: payload(category: category, alert: alert))
        let record = TestRecord(
            headers: [("apns-topic", bundleID), ("app-state", state.rawValue)], value: value.serialized(),
            topic: TestRecord.responsesTopic
        ).requestRecord
        return dispatcher.respond(record, appStates: appStates, receivedAt: Date())
    }
}

extension DispatchResult {
    /// The action record's JSON value.
    func actionValue() throws -> JSONObject {
        let record = try #require(outputs.first { $0.kind == .action })
        return try Fixture.object(record.value)
    }
}
