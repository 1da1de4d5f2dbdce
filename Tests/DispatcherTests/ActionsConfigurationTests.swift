import Dispatcher
import Foundation
import JSON
import Notifications
import Testing

/// The configuration of SEMANTICS section 10: actions, category options, content extensions'
/// answers and media buttons, the action handler, the two topics, and every mistake refused.
@Suite("Configuration of actions and responses (section 10)")
struct ActionsConfigurationTests {
    @Test("actions, options, actionResponses, mediaPlayPauseButton and actionHandler are read")
    func reading() throws {
        let configuration = try Configuration(yaml: ResponseFixture.yaml(handler: .legacyWithResponseInfo))
        let app = try #require(configuration.apps[ResponseFixture.bundleID])
        #expect(app.actionHandler == .legacyWithResponseInfo)
        let message = try #require(app.categories["MESSAGE"])
        #expect(message.options == [.customDismissAction])
        #expect(message.reportsDismiss)
        #expect(
            message.actions == [
                NotificationAction(id: "LIKE", title: "Like"),
                NotificationAction(
                    id: "REPLY", title: "Reply", options: [.foreground],
                    textInput: NotificationAction.TextInput(buttonTitle: "Send", placeholder: "Message")),
                NotificationAction(id: "ARCHIVE", title: "Archive", options: [.destructive]),
            ])
        #expect(app.categories["PLAIN"]?.action("VIEW")?.options == [.foreground, .authenticationRequired])
        #expect(app.categories["PLAIN"]?.reportsDismiss == false)
        let chat = try #require(app.contentExtensions.first)
        #expect(chat.actionResponses == ActionResponses(byAction: ["LIKE": .doNotDismiss, "ARCHIVE": .dismiss], fallback: .dismissAndForwardAction))
        #expect(chat.mediaPlayPauseButton == MediaPlayPauseButton.none)
        #expect(app.contentExtensions[1].actionResponses?.option(for: "DELETE") == .dismissAndForwardAction)
        #expect(app.contentExtensions[2].actionResponses == nil)
        #expect(app.contentExtensions[2].mediaPlayPauseButton == .overlay)
    }

    @Test("defaults: userNotificationCenter, no actions, no options, no answers, no media button; the two topics")
    func defaults() throws {
        let configuration = try Configuration(
            yaml: "apps: {com.example.app: {categories: {A: {}}, contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1}]}}")
        let app = try #require(configuration.apps["com.example.app"])
        #expect(app.actionHandler == .userNotificationCenter)
        #expect(app.categories["A"] == CategorySettings())
        #expect(app.contentExtensions[0].actionResponses == nil)
        #expect(app.contentExtensions[0].mediaPlayPauseButton == MediaPlayPauseButton.none)
        #expect(configuration.topics.responses == "notifications.responses")
        #expect(configuration.topics.actions == "notifications.actions")
        let empty = try Configuration(yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, actionResponses: {}}]}}")
        #expect(empty.apps["com.example.app"]?.contentExtensions[0].actionResponses == ActionResponses())
    }

    @Test("the topics come from the file or the environment")
    func topics() throws {
        let file = try Configuration(yaml: "topics: {responses: r, actions: a}")
        #expect(file.topics.responses == "r")
        #expect(file.topics.actions == "a")
        let environment = try Configuration(
            yaml: "topics: {responses: r}",
            environment: [
                "NOTIFICATION_DISPATCHER_TOPICS_RESPONSES": "env.responses",
                "NOTIFICATION_DISPATCHER_TOPICS_ACTIONS": "env.actions",
            ])
        #expect(environment.topics.responses == "env.responses")
        #expect(environment.topics.actions == "env.actions")
    }

    @Test("presentation carries mediaPlayPauseButtonType only when the extension has a button")
    func presentation() async throws {
        // `.none`, not nil: JSONValue is ExpressibleByNilLiteral, so nil would be JSON null.
        let cases: [(category: String, button: JSONValue?)] = [("VIDEO", .string("overlay")), ("MESSAGE", .none)]
        for (category, button) in cases {
            let result = try await Fixture.dispatch(
                ResponseFixture.yaml(), headers: [("apns-topic", ResponseFixture.bundleID)],
                payload: ResponseFixture.payload(category: category))
            let presentation = try #require(try result.deliveryValue()["presentation"]?.objectValue)
            #expect(presentation["mediaPlayPauseButtonType"] == button)
            #expect(presentation.keys.last == (button == nil ? "userInteractionEnabled" : "mediaPlayPauseButtonType"))
        }
    }

    typealias Mistake = ConfigurationTests.Mistake

    static let app = #"apps["com.example.app"]"#

    static let mistakes: [Mistake] = [
        Mistake(
            yaml: "apps: {com.example.app: {actionHandler: delegate}}", code: .invalidValue, path: "\(app).actionHandler",
            value: "\"delegate\""),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: {id: X}}}}}", code: .wrongType,
            path: "\(app).categories.A.actions", value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{title: T}]}}}}", code: .missingValue,
            path: "\(app).categories.A.actions[0].id", value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X}]}}}}", code: .missingValue,
            path: "\(app).categories.A.actions[0].title", value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T}, {id: Y, title: U}, {id: X, title: V}]}}}}",
            code: .duplicateAction, path: "\(app).categories.A.actions[2].id", value: "X"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: com.apple.UNNotificationDefaultActionIdentifier, title: T}]}}}}",
            code: .invalidValue, path: "\(app).categories.A.actions[0].id",
            value: "com.apple.UNNotificationDefaultActionIdentifier"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: com.apple.UNNotificationDismissActionIdentifier, title: T}]}}}}",
            code: .invalidValue, path: "\(app).categories.A.actions[0].id",
            value: "com.apple.UNNotificationDismissActionIdentifier"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T, options: [foreground, urgent]}]}}}}",
            code: .invalidValue, path: "\(app).categories.A.actions[0].options[1]", value: "\"urgent\""),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T, options: [destructive, destructive]}]}}}}",
            code: .invalidValue, path: "\(app).categories.A.actions[0].options[1]", value: "\"destructive\""),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T, textInput: {buttonTitle: Send}}]}}}}",
            code: .missingValue, path: "\(app).categories.A.actions[0].textInput.placeholder", value: nil),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T, textInput: {buttonTitle: S, placeholder: P, maxLength: 3}}]}}}}",
            code: .unknownKey, path: "\(app).categories.A.actions[0].textInput.maxLength", value: "maxLength"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {actions: [{id: X, title: T, icon: star}]}}}}",
            code: .unknownKey, path: "\(app).categories.A.actions[0].icon", value: "icon"),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {options: [customDismiss]}}}}", code: .invalidValue,
            path: "\(app).categories.A.options[0]", value: "\"customDismiss\""),
        Mistake(
            yaml: "apps: {com.example.app: {categories: {A: {options: customDismissAction}}}}", code: .wrongType,
            path: "\(app).categories.A.options", value: "customDismissAction"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, mediaPlayPauseButton: big}]}}",
            code: .invalidValue, path: "\(app).contentExtensions[0].mediaPlayPauseButton", value: "\"big\""),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, actionResponses: {default: close}}]}}",
            code: .invalidValue, path: "\(app).contentExtensions[0].actionResponses.default", value: "\"close\""),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, actionResponses: [LIKE]}]}}",
            code: .wrongType, path: "\(app).contentExtensions[0].actionResponses", value: nil),
        Mistake(
            yaml: """
                apps:
                  com.example.app:
                    categories:
                      A: {actions: [{id: LIKE, title: Like}]}
                      B: {actions: [{id: SHARE, title: Share}]}
                    contentExtensions:
                      - {name: V, categories: A, initialContentSizeRatio: 1, actionResponses: {LIKE: doNotDismiss, SHARE: dismiss}}
                """,
            code: .unknownAction, path: "\(app).contentExtensions[0].actionResponses.SHARE", value: "SHARE"),
        Mistake(
            yaml: "apps: {com.example.app: {contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, actionResponses: {LIKE: dismiss}}]}}",
            code: .unknownAction, path: "\(app).contentExtensions[0].actionResponses.LIKE", value: "LIKE"),
        Mistake(
            yaml: """
                apps:
                  com.example.app:
                    categories: {A: {actions: [{id: default, title: Default}]}}
                    contentExtensions: [{name: V, categories: A, initialContentSizeRatio: 1, actionResponses: {default: dismiss}}]
                """,
            code: .invalidValue, path: "\(app).contentExtensions[0].actionResponses", value: "default"),
        Mistake(yaml: "topics: {responses: ''}", code: .invalidValue, path: "topics.responses", value: "\"\""),
        Mistake(yaml: "topics: {actions: [a]}", code: .wrongType, path: "topics.actions", value: nil),
    ]

    @Test("every mistake stops loading with its code, key path and value", arguments: mistakes)
    func mistake(_ mistake: Mistake) {
        ConfigurationTests().mistake(mistake)
    }
}
