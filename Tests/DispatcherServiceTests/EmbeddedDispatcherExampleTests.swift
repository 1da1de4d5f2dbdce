import Foundation
import JSON
import Kafka
import Records
import TestSupport
import Testing

/// The program of docs/extensions.md, "Embedding the dispatcher": the documentation shows the
/// example target's source as it is, and the built example runs as a worker whose Swift
/// extension modifies what it is given.
@Suite("the embedding example (Examples/EmbeddedDispatcher)")
struct EmbeddedDispatcherExampleTests {
    static let root = BuiltBinary.packageRoot()

    @Test("docs/extensions.md shows Examples/EmbeddedDispatcher/main.swift word for word")
    func documentedProgramIsTheExample() throws {
        let program = try String(contentsOf: Self.root.appendingPathComponent("Examples/EmbeddedDispatcher/main.swift"), encoding: .utf8)
        let document = try String(contentsOf: Self.root.appendingPathComponent("docs/extensions.md"), encoding: .utf8)
        let section = try #require(document.range(of: "\n## Embedding the dispatcher\n"), "the section is missing")
        let rest = document[section.upperBound...]
        let opening = try #require(rest.range(of: "```swift\n"), "the section has no Swift block")
        let closing = try #require(rest[opening.upperBound...].range(of: "\n```\n"), "the Swift block does not end")
        let shown = String(rest[opening.upperBound..<closing.lowerBound]) + "\n"
        #expect(shown == program, "docs/extensions.md's program differs from Examples/EmbeddedDispatcher/main.swift")
    }

    @Test("the built example on the embedded broker: an alert routed to its Swift extension is delivered signed, the rest as it was")
    func exampleSignsWhatItsExtensionGets() async throws {
        let apps = """
              com.example.news:
                serviceExtension: {kind: signature, name: sign, signature: "(Example News)"}
              com.example.chat: {}
            """
        try await Pipeline.with(partitions: 2, apps: apps) { pipeline in
            let token = String(repeating: "5e1f", count: 16)
            func request(_ bundleID: String, _ payload: String) -> (id: String, record: ProducerRecord) {
                let id = UUID().uuidString.lowercased()
                let headers = [RecordHeader(name: "apns-topic", value: bundleID), RecordHeader(name: "apns-id", value: id)]
                return (id, ProducerRecord(topic: Pipeline.requests, key: Array(token.utf8), value: Array(payload.utf8), headers: headers))
            }
            let signed = request("com.example.news", #"{"aps":{"alert":{"title":"Hi","body":"There"},"mutable-content":1}}"#)
            let unsigned = request("com.example.chat", #"{"aps":{"alert":{"title":"Hi","body":"There"},"mutable-content":1}}"#)
            for (_, record) in [signed, unsigned] { _ = try await pipeline.producer.send(record) }

            let example = try pipeline.startWorker(
                "example", executable: try BuiltBinary.path(of: "EmbeddedDispatcher"), arguments: [pipeline.configPath])
            try await pipeline.outputs.waitForAll([signed.id, unsigned.id], in: Pipeline.accountingTopics, limit: .seconds(120))
            let deliveries = pipeline.outputs.records(of: Pipeline.deliveries)
            let log = pipeline.log(of: "example").suffix(2_000)
            let modified = try #require(deliveries.first { $0.header("apns-id") == signed.id }?.json.map(JSONValue.object), "\(log)")
            #expect(modified[path: ["disposition"]]?.stringValue == "modified", "\(modified)")
            #expect(modified[path: ["payload", "aps", "alert", "body"]]?.stringValue == "There (Example News)", "\(modified)")
            #expect(modified[path: ["payload", "aps", "alert", "title"]]?.stringValue == "Hi")
            #expect(modified[path: ["extension", "name"]]?.stringValue == "sign", "the delivery names the step that modified it")
            // The app without an extension: delivered as it came.
            let original = try #require(deliveries.first { $0.header("apns-id") == unsigned.id }?.json.map(JSONValue.object), "\(log)")
            #expect(original[path: ["disposition"]]?.stringValue == "original", "\(original)")
            #expect(original[path: ["payload", "aps", "alert", "body"]]?.stringValue == "There")

            example.send(signal: SIGTERM)
            let exit = try await example.waitForExit()
            #expect(exit.exitedNormally && exit.status == 0, "\(pipeline.log(of: "example").suffix(2_000))")
        }
    }
}
