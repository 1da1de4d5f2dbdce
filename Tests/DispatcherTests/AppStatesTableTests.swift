import Records
import Dispatcher
import Foundation
import JSON
import Notifications
import Testing
import TestSupport

/// SEMANTICS section 9: the app-states table fed from the compacted topic.
@Suite("App-states table (section 9)")
struct AppStatesTableTests {
    private let token = TestRecord.token(0xAB)

    @Test("a state record sets the entry under the normalised token; a null value deletes it")
    func setAndDelete() {
        let table = AppStatesTable()
        let update = table.apply(key: RecordBytes(token.uppercased()), value: RecordBytes(#"{"state":"forceQuit"}"#))
        #expect(update == .set(deviceToken: token, state: .forceQuit))
        #expect(table.appState(forDeviceToken: token) == .forceQuit)
        table.apply(key: RecordBytes(token), value: RecordBytes(#"{"state":"background"}"#))
        #expect(table.appState(forDeviceToken: token) == .background)
        #expect(table.apply(key: RecordBytes(token), value: nil) == .deleted(deviceToken: token))
        #expect(table.appState(forDeviceToken: token) == nil)
        #expect(table.count == 0)
    }

    @Test(
        "invalid entries are ignored and leave the table as it was",
        arguments: [
            (nil, #"{"state":"foreground"}"#), ("abc", #"{"state":"foreground"}"#),
            (String(repeating: "zz", count: 32), #"{"state":"foreground"}"#),
            (String(repeating: "ab", count: 32), "not json"), (String(repeating: "ab", count: 32), #"{"state":"asleep"}"#),
            (String(repeating: "ab", count: 32), #"{"mood":"foreground"}"#), (String(repeating: "ab", count: 32), "[]"),
        ] as [(String?, String)])
    func invalid(key: String?, value: String) {
        let table = AppStatesTable()
        table.apply(key: RecordBytes(token), value: RecordBytes(#"{"state":"suspended"}"#))
        let update = table.apply(key: key.map { RecordBytes($0) }, value: RecordBytes(value))
        guard case .invalid = update else {
            Issue.record("expected invalid, got \(update)")
            return
        }
        #expect(table.appState(forDeviceToken: token) == .suspended)
        #expect(table.count == 1)
    }

    @Test("the dispatcher reads the table when the request has no app-state header")
    func usedByDispatcher() async throws {
        let table = AppStatesTable()
        table.apply(key: RecordBytes(TestRecord.token()), value: RecordBytes(#"{"state":"forceQuit"}"#))
        let result = try await Fixture.dispatch(
            "", headers: [("apns-topic", Fixture.bundleID), ("apns-push-type", "background")],
            payload: ["aps": ["content-available": 1]], appStates: table)
        #expect(result.disposition == .discarded)
        #expect(result.reason == .appForceQuit)
    }
}
