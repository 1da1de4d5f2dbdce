import Dispatcher
import Foundation
import Notifications

/// Generates the `dev` demo's steady stream of requests: a realistic mix of alerts a service
/// extension may modify, plain alerts, silent pushes, badge updates, VoIP pushes, expired and
/// invalid requests, for the apps of the configuration.
struct DemoTraffic: Sendable {
    /// A request ready to produce.
    struct Request: Sendable {
        var key: [UInt8]?
        var headers: [(String, String)]
        var value: [UInt8]
    }

    private let apps: [(bundleID: String, categories: [String])]
    private let deviceTokens: [String]

    /// - Parameter configuration: the apps whose bundle IDs and categories the requests use; with
    ///   no app configured, `com.example.app` stands in (every topic is then allowed).
    init(configuration: Configuration, devices: Int = 500, seed: UInt64 = 7) {
        let configured = configuration.apps.keys.sorted().map { bundleID in
            (bundleID, configuration.apps[bundleID]!.categories.keys.sorted())
        }
        apps = configured.isEmpty ? [("com.example.app", [])] : configured
        var generator = DemoRandom(seed: seed)
        deviceTokens = (0..<max(devices, 1)).map { _ in
            (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        }
    }

    /// The request numbered `index` of the stream (the same index always gives the same request).
    func request(_ index: Int) -> Request {
        var generator = DemoRandom(seed: UInt64(index) &* 0x9E37_79B9 &+ 1)
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
            return Request(key: Array("not-a-token".utf8), headers: headers, value: Array(#"{"aps":{"alert":"x"}}"#.utf8))
        }
        let value = #"{"aps":\#(aps),"order-id":\#(index)}"#
        return Request(key: Array(token.utf8), headers: headers, value: Array(value.utf8))
    }
}

/// SplitMix64: small, fast and deterministic, so the demo's stream and the benchmarks' records are the same on every run.
struct DemoRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
