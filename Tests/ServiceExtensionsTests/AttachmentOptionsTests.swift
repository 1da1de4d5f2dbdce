import Dispatcher
import Foundation
import Testing

/// Start-up checks of the `attachment` options: each mistake is a configuration error at its key path.
@Suite struct AttachmentOptionsTests {
    static let stepPath = #"apps["com.example.app"].serviceExtension"#

    @Test(arguments: [
        ("urlPath: a..b", "urlPath", "a..b"),
        ("urlPath: [a]", "urlPath", nil),
        ("allowHosts: [\"http://x\"]", "allowHosts", "http://x"),
        ("allowHosts: 10.0.0.0/8", "allowHosts", nil),
        ("allowHosts: [10.0.0.0/40]", "allowHosts", "10.0.0.0/40"),
        ("maxBytes: {image: -1}", "maxBytes", "-1"),
        ("maxBytes: {image: 1.5}", "maxBytes", "1.5"),
        ("maxBytes: {document: 10}", "maxBytes", "document"),
        ("timeout: 10", "timeout", "10"),
        ("timeout: 0s", "timeout", "0s"),
        ("retries: 3", "retries", "retries"),
    ] as [(String, String, String?)])
    func badOptionsStopStartUpWithTheirKeyPath(line: String, key: String, value: String?) async throws {
        let store = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: store) }
        let yaml = Support.yaml(steps: """
                  kind: attachment
                  store: \(store.path)
                  \(line)
            """)
        let error = try #require(try await Support.startUpError(yaml))
        #expect(error.code == .invalidExtensionOptions)
        #expect(error.path == "\(Self.stepPath).\(key)")
        if let value { #expect(error.value == value) }
    }

    @Test func theStoreIsRequiredAndCreatedAtStartUp() async throws {
        let missing = try #require(try await Support.startUpError(Support.yaml(steps: "      kind: attachment")))
        #expect(missing.path == "\(Self.stepPath).store")

        let parent = Support.temporaryDirectory("parent")
        defer { try? FileManager.default.removeItem(at: parent) }
        let store = parent.appendingPathComponent("a/b/store")
        let yaml = Support.yaml(steps: "      kind: attachment\n      store: \(store.path)")
        #expect(try await Support.startUpError(yaml) == nil)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: store.path, isDirectory: &isDirectory) && isDirectory.boolValue)

        // A regular file where the directory should be.
        let file = parent.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        let blocked = try #require(try await Support.startUpError(Support.yaml(steps: "      kind: attachment\n      store: \(file.path)")))
        #expect(blocked.path == "\(Self.stepPath).store")
    }
}
