import Foundation
import TestSupport

/// A response record a test produces (SEMANTICS section 10), identified by its `traceparent`,
/// which every output it causes carries: the trace id numbers the response in the run, the span
/// id numbers it among its device's responses.
struct TestResponse: Sendable {
    /// The kinds of response the end-to-end tests mix: every row of the table and each refusal.
    enum Kind: String, Sendable, CaseIterable {
        /// Row 1: the media button of a VIDEO notification.
        case play, pause
        /// Row 2: a VIDEO notification dismissed (no customDismissAction).
        case dismissUnreported
        /// Row 3: LIKE (doNotDismiss), REPLY with text (dismissAndForwardAction), OPEN (not listed: forwarded).
        case like, reply, open
        /// Row 4: a tap, a MESSAGE dismissed (customDismissAction), SAVE (no actionResponses).
        case tap, dismissReported, save
        /// Refused: an undeclared action (`UnknownAction`), bytes that are not JSON (`InvalidResponse`),
        /// a key that is not a device token (`BadDeviceToken`).
        case undeclared, garbage, badToken

        /// Whether the response is refused (ends as a dead letter).
        var isInvalid: Bool { [.undeclared, .garbage, .badToken].contains(self) }
    }

    /// The app every test response is for, as `ResponsesEndToEndTests.apps` configures it.
    static let bundleID = "com.example.chat"

    var kind: Kind
    /// The record (``TestRecord``, from the responses topic).
    var record: TestRecord
    /// The `traceparent` header, unique to this response.
    var traceparent: String
    /// The device token (lowercase) the response is for.
    var token: String
    /// The response's position among its device's responses.
    var sequence: Int

    /// Response number `number` of the run, of `kind`, for `token`, its app in `state`.
    static func make(_ kind: Kind, number: Int, token: String, sequence: Int, state: String) -> TestResponse {
        let traceparent = String(format: "00-%032x-%016x-01", number + 1, sequence + 1)
        let category = [.play, .pause, .dismissUnreported, .save].contains(kind) ? "VIDEO" : "MESSAGE"
        let notification = #""notification":{"apnsId":"\#(UUID().uuidString)","payload":{"aps":{"alert":{"title":"T\#(number)","body":"B"},"category":"\#(category)"},"n":\#(number)}}"#
        let act: String
        switch kind {
        case .play: act = #""mediaCommand":"play""#
        case .pause: act = #""mediaCommand":"pause""#
        case .dismissUnreported, .dismissReported: act = #""actionIdentifier":"com.apple.UNNotificationDismissActionIdentifier""#
        case .like: act = #""actionIdentifier":"LIKE""#
        case .reply: act = #""actionIdentifier":"REPLY","userText":"reply \#(number)""#
        case .open: act = #""actionIdentifier":"OPEN""#
        case .tap, .badToken: act = #""actionIdentifier":"com.apple.UNNotificationDefaultActionIdentifier""#
        case .save: act = #""actionIdentifier":"SAVE""#
        case .undeclared: act = #""actionIdentifier":"FORWARD""#
        case .garbage: act = ""
        }
        let value = kind == .garbage ? "{\(notification)," : "{\(notification),\(act)}"
        let record = TestRecord(
            token: kind == .badToken ? "zz-\(token.prefix(8))" : token,
            headers: [("apns-topic", bundleID), ("app-state", state), ("traceparent", traceparent)],
            value: Array(value.utf8), topic: TestRecord.responsesTopic)
        return TestResponse(kind: kind, record: record, traceparent: traceparent, token: token, sequence: sequence)
    }

    /// `count` responses over the devices of `tokens`, kinds and app states drawn in turn
    /// (deterministic), each device's responses numbered from 0.
    static func mix(count: Int, tokens: [String]) -> [TestResponse] {
        let states = ["foreground", "background", "suspended", "notRunning", "forceQuit"]
        var sequences = [Int](repeating: 0, count: tokens.count)
        return (0..<count).map { number in
            let device = (number &* 7907) % tokens.count
            defer { sequences[device] += 1 }
            return make(
                Kind.allCases[number % Kind.allCases.count], number: number, token: tokens[device],
                sequence: sequences[device], state: states[(number / Kind.allCases.count) % states.count])
        }
    }
}
