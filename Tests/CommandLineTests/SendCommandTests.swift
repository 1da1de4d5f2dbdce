import Foundation
import Testing
import TestSupport

/// `send` (the built binary): options that cannot make a record are refused before any connection.
@Suite("send command: option checks (built binary)")
struct SendCommandTests {
    /// Arguments `send` must refuse, none of which gets to the (unreachable) broker.
    static let refused: [[String]] = [
        ["--token", "ab"],  // a request needs --topic
        ["--response", "LIKE", "--media", "play"],
        ["--media", "stop"],
        ["--text", "hi", "--token", "ab", "--topic", "com.example.app"],  // --text without --response
        ["--notification-id", "x", "--token", "ab", "--topic", "com.example.app"],
    ]

    @Test("refused with the usage exit status", arguments: refused)
    func refusedOptions(_ arguments: [String]) async throws {
        let exit = try await ChildProcess.run(
            try BuiltBinary.path(), ["send", "--bootstrap", "127.0.0.1:9"] + arguments, input: Data("{}".utf8))
        #expect(exit.exitedNormally && exit.status == 64)
        #expect(exit.output.isEmpty, "nothing sent, no apns-id printed")
    }

    @Test("a response to a bare payload needs the notification's id, the token and the topic")
    func bareResponse() async throws {
        let exit = try await ChildProcess.run(
            try BuiltBinary.path(), ["send", "--bootstrap", "127.0.0.1:9", "--response", "default", "--token", "ab"],
            input: Data(#"{"aps":{"alert":"Hi"}}"#.utf8))
        #expect(exit.exitedNormally && exit.status == 64)
        #expect(exit.output.isEmpty)
    }
}
