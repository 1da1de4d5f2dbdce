import Dispatcher
import DispatcherTools
import Foundation
import JSON
import Notifications

/// Generates the `dev` demo's steady stream: a realistic mix of alerts a service extension may
/// modify, plain alerts, silent pushes, badge updates (increments for an app with a badge ledger),
/// VoIP pushes, expired and invalid requests,
/// and, every fourth record, a user's response (a tap, a custom action, a text reply, a dismissal,
/// a media command, now and then an undeclared action) for the apps of the configuration.
struct DemoTraffic: Sendable {
    /// A record ready to produce.
    struct Request: Sendable {
        var topic: String
        var key: [UInt8]?
        var headers: [(String, String)]
        var value: [UInt8]
    }

    /// A category users can respond to, with what it offers (SEMANTICS section 10).
    private struct Respondable: Sendable {
        var bundleID: String
        var category: String
        var actions: [String] = []
        var textInputActions: [String] = []
        var hasMediaButton = false
    }

    /// One record in this many is a response.
    static let responseInterval = 4

    private let apps: [(bundleID: String, categories: [String], keepsLedger: Bool)]
    private let respondable: [Respondable]
    private let deviceTokens: [String]
    private let topics: TopicSettings

    /// - Parameter configuration: the apps whose bundle IDs, categories and actions the records
    ///   use; with no app configured, `com.example.app` stands in (every topic is then allowed).
    init(configuration: Configuration, devices: Int = 500, seed: UInt64 = 7) {
        let configured = configuration.apps.keys.sorted().map { bundleID in
            let app = configuration.apps[bundleID]!
            return (bundleID, app.categories.keys.sorted(), app.badgeLedger)
        }
        apps = configured.isEmpty ? [("com.example.app", [], false)] : configured
        respondable = Self.respondable(configuration)
        topics = configuration.topics
        var generator = SeededRandom(seed: seed)
        deviceTokens = (0..<max(devices, 1)).map { _ in
            Hex.lowercase((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
        }
    }

    /// The record numbered `index` of the stream: a response every ``responseInterval`` records,
    /// otherwise a request (the same index always gives the same record).
    func record(_ index: Int) -> Request {
        index % Self.responseInterval == Self.responseInterval - 1 ? response(index) : request(index)
    }

    /// The request numbered `index` of the stream (the same index always gives the same request).
    func request(_ index: Int) -> Request {
        var generator = SeededRandom(seed: UInt64(index) &* 0x9E37_79B9 &+ 1)
        let app = apps[Int.random(in: 0..<apps.count, using: &generator)]
        let token = deviceTokens[Int.random(in: 0..<deviceTokens.count, using: &generator)]
        let category = app.categories.randomElement(using: &generator)
        let roll = Int.random(in: 0..<100, using: &generator)
        var headers = [("apns-topic", app.bundleID)]
        let aps: String
        switch roll {
        case 0..<45:
            let categoryText = category.map { #","category":"\#($0)""# } ?? ""
            aps = #"{"alert":{"title":"Order \#(index)","body":"Your order has shipped."},"mutable-content":1\#(categoryText)}"#
        case 45..<60:
            aps = #"{"alert":"Reminder \#(index)","sound":"default"}"#
        case 60..<75:
            headers += [("apns-push-type", "background"), ("apns-priority", "5")]
            aps = #"{"content-available":1}"#
        case 75..<85 where app.keepsLedger:
            // One more unread: the ledger counts it (section 21).
            headers.append(("badge-increment", "1"))
            aps = "{}"
        case 75..<85:
            aps = #"{"badge":\#(index % 20)}"#
        case 85..<90:
            headers = [("apns-topic", app.bundleID + ".voip"), ("apns-push-type", "voip")]
            aps = #"{"alert":"Incoming call"}"#
        case 90..<94:
            headers.append(("apns-expiration", "1"))
            aps = #"{"alert":"Too late"}"#
        case 94..<97:
            headers.append(("apns-priority", "7"))
            aps = #"{"alert":"Bad priority"}"#
        default:
            return Request(
                topic: topics.requests, key: Array("not-a-token".utf8), headers: headers,
                value: Array(#"{"aps":{"alert":"x"}}"#.utf8))
        }
        let value = #"{"aps":\#(aps),"order-id":\#(index)}"#
        return Request(topic: topics.requests, key: Array(token.utf8), headers: headers, value: Array(value.utf8))
    }

    /// The response numbered `index`: what a user did with a notification of one of the apps'
    /// categories, on a device whose app is in a state drawn at random.
    func response(_ index: Int) -> Request {
        var generator = SeededRandom(seed: UInt64(index) &* 0xC2B2_AE3D &+ 5)
        let target = respondable[Int.random(in: 0..<respondable.count, using: &generator)]
        let token = deviceTokens[Int.random(in: 0..<deviceTokens.count, using: &generator)]
        let states: [AppState] = [.foreground, .background, .suspended, .notRunning, .notRunning, .forceQuit]
        let state = states[Int.random(in: 0..<states.count, using: &generator)]
        let notificationID = Self.uuid(using: &generator)
        var response = JSONObject()
        let payload: JSONValue = [
            "aps": ["alert": ["title": .string("Message \(index)"), "body": "Tap, reply or swipe."], "category": .string(target.category)],
            "order-id": .number(JSONNumber(index)),
        ]
        response["notification"] = ["apnsId": .string(notificationID), "payload": payload]
        switch Int.random(in: 0..<100, using: &generator) {
        case 35..<60 where !target.actions.isEmpty:
            response["actionIdentifier"] = .string(target.actions[Int.random(in: 0..<target.actions.count, using: &generator)])
        case 60..<72 where !target.textInputActions.isEmpty:
            let action = target.textInputActions[Int.random(in: 0..<target.textInputActions.count, using: &generator)]
            response["actionIdentifier"] = .string(action)
            response["userText"] = .string("Reply \(index)")
        case 72..<84 where target.hasMediaButton:
            response["mediaCommand"] = .string(Bool.random(using: &generator) ? "play" : "pause")
        case 84..<96:
            response["actionIdentifier"] = .string(ResponseAction.dismissIdentifier)
        case 96..<100:
            response["actionIdentifier"] = "NOT_DECLARED"
        default:
            response["actionIdentifier"] = .string(ResponseAction.defaultIdentifier)
        }
        return Request(
            topic: topics.responses, key: Array(token.utf8),
            headers: [("apns-topic", target.bundleID), ("app-state", state.rawValue)],
            value: JSONValue.object(response).serialized())
    }

    /// The categories of the configured apps users can respond to: those with settings or a
    /// content extension (or a stand-in category when no app is configured).
    private static func respondable(_ configuration: Configuration) -> [Respondable] {
        var all: [Respondable] = []
        for bundleID in configuration.apps.keys.sorted() {
            let app = configuration.apps[bundleID]!
            let presented = app.contentExtensions.flatMap(\.categories)
            for category in Set(app.categories.keys).union(presented).sorted() {
                let actions = app.categories[category]?.actions ?? []
                let presenter = app.contentExtensions.first { $0.categories.contains(category) }
                all.append(
                    Respondable(
                        bundleID: bundleID, category: category, actions: actions.map(\.id),
                        textInputActions: actions.filter { $0.textInput != nil }.map(\.id),
                        hasMediaButton: (presenter?.mediaPlayPauseButton ?? .none) != .none))
            }
        }
        return all.isEmpty ? [Respondable(bundleID: "com.example.app", category: "GENERAL")] : all
    }

    /// A random UUID (version 4 layout) from `generator`, so the stream is the same on every run.
    private static func uuid(using generator: inout SeededRandom) -> String {
        let high = generator.next() & ~0xF000 | 0x4000
        let low = generator.next() & ~(0xC000 << 48) | (0x8000 << 48)
        let hex = String(format: "%016llx%016llx", high, low)
        let digits = Array(hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
    }
}
