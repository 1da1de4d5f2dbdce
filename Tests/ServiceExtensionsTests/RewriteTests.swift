import Dispatcher
import Foundation
import JSON
import Notifications
import Records
import ServiceExtensions
import Testing
import TestSupport

/// The built-in `rewrite` kind (SEMANTICS section 4.1), run directly through the registry.
@Suite("rewrite")
struct RewriteTests {
    /// Runs a `rewrite` step with `options` on `payload`.
    private func rewrite(_ options: JSONObject, _ payload: JSONValue, attachments: [JSONObject] = []) async throws -> NotificationContent {
        var registry = ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        let make = try registry.maker(for: ExtensionStep(kind: "rewrite", options: options, configPath: "test"))
        let record = TestRecord(payload: payload, topic: "t").requestRecord
        let notification = try RequestValidator().validate(record).get()
        let content = NotificationContent(payload: notification.payload.json, attachments: attachments)
        let request = ServiceExtensionRequest(
            notification: notification, content: content, category: nil, stepName: "rewrite",
            deadline: .now + .seconds(5))
        return try await make().didReceive(request)
    }

    @Test("set creates missing intermediate objects and applies in the order written")
    func setPaths() async throws {
        let output = try await rewrite(
            ["set": ["aps.thread-id": "t", "meta.source.name": "rw", "meta.source.id": 1]],
            ["aps": ["alert": "Hi"]])
        #expect(output.payload == ["aps": ["alert": "Hi", "thread-id": "t"], "meta": ["source": ["name": "rw", "id": 1]]])
        #expect(output.payload.keys == ["aps", "meta"])
    }

    @Test("{{path}} takes the value of the content entering the step: strings as is, other JSON compactly, missing as empty")
    func templates() async throws {
        let output = try await rewrite(
            [
                "set": [
                    "aps.alert.title": "{{ aps.alert.body }}!",
                    "copy": ["nested": ["{{aps.badge}}|{{ missing.path }}|{{aps.alert}}"], "n": 5],
                    "aps.alert.body": "changed",
                    "echo": "{{aps.alert.body}}",
                ]
            ],
            ["aps": ["alert": ["body": "Hello"], "badge": 2]])
        #expect(JSONValue.object(output.payload)[path: ["aps", "alert", "title"]] == "Hello!")
        #expect(output.payload["copy"] == ["nested": [#"2||{"body":"Hello"}"#], "n": 5])
        // Templates read the content entering the step, not the values set before them.
        #expect(output.payload["echo"] == "Hello")
    }

    @Test("remove runs after set; removing a missing path does nothing; attachments pass through")
    func remove() async throws {
        let output = try await rewrite(
            ["set": ["extra.x": 1, "keep": true], "remove": ["secret", "aps.sound", "no.such.path", "extra"]],
            ["aps": ["alert": "Hi", "sound": "a"], "secret": "s"], attachments: [["url": "file:///x"]])
        #expect(output.payload == ["aps": ["alert": "Hi"], "keep": true])
        #expect(output.attachments == [["url": "file:///x"]])
    }

    @Test("a path through a value that is not an object fails the step, for set and remove alike")
    func throughNonObject() async throws {
        await #expect(throws: (any Error).self) {
            _ = try await rewrite(["set": ["aps.alert.title": "x"]], ["aps": ["alert": "Hi"]])
        }
        await #expect(throws: (any Error).self) {
            _ = try await rewrite(["remove": ["aps.alert.title"]], ["aps": ["alert": "Hi"]])
        }
    }

    @Test("options are checked when the registry builds the step")
    func badOptions() {
        var registry = ExtensionRegistry()
        BuiltInExtensions.registerRewrite(in: &registry)
        for options: JSONObject in [["sett": [:]], ["set": "x"], ["remove": "x"], ["remove": [1]], ["set": [".a": 1]]] {
            let error = #expect(throws: ConfigurationError.self) {
                _ = try registry.maker(for: ExtensionStep(kind: "rewrite", options: options, configPath: "apps.a.serviceExtension"))
            }
            #expect(error?.code == .invalidExtensionOptions)
            #expect(error?.path.hasPrefix("apps.a.serviceExtension.") == true)
        }
    }
}
