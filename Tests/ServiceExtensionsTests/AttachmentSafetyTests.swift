import Dispatcher
import Foundation
import HTTPServer
import JSON
import Notifications
import ServiceExtensions
import Testing
import TestSupport

/// The `attachment` kind's refusals: each happens before connecting (the server sees no request),
/// names its rule, and delivers the original.
@Suite struct AttachmentSafetyTests {
    /// Dispatches a payload whose media URL is `url` through an attachment step with `allowHosts`.
    static func dispatch(url: String, allowHosts: String = "[]") async throws -> (DispatchResult, JSONObject) {
        let store = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: store) }
        let payload = Support.alertPayload([("media-url", .string(url))])
        let steps = AttachmentDownloadTests.attachmentStep(store: store, allowHosts: allowHosts)
        return (try await Support.dispatch(Support.yaml(steps: steps), payload: payload), payload)
    }

    static func expectRefused(_ result: DispatchResult, original: JSONObject, rule: String, _ detail: String = "") {
        #expect(result.reason == .extensionFailed)
        #expect(result.deliveredPayload == original)
        #expect(result.deliveredAttachments.isEmpty)
        let failure = result.extensionFailure ?? ""
        #expect(failure.contains("attachment \(rule):"), "\(failure)")
        if !detail.isEmpty { #expect(failure.contains(detail), "\(failure)") }
    }

    @Test func loopbackIsRefusedWhenNotAllowed() async throws {
        try await MediaServer.withServer({ router, _ in
            router.get("media") { _ in MediaServer.media(MediaSamples.png, contentType: "image/png") }
        }) { port, counters in
            let (result, original) = try await Self.dispatch(url: "http://127.0.0.1:\(port)/media")
            Self.expectRefused(result, original: original, rule: "non-public-address", "127.0.0.1, a loopback address")
            #expect(counters.requests.isEmpty)
        }
    }

    @Test func aNameThatResolvesToLoopbackIsRefusedAndAllowedByName() async throws {
        try await MediaServer.withServer({ router, _ in
            router.get("media") { _ in MediaServer.media(MediaSamples.png, contentType: "image/png") }
        }) { port, counters in
            let (refused, original) = try await Self.dispatch(url: "http://localhost:\(port)/media")
            Self.expectRefused(refused, original: original, rule: "non-public-address", "localhost is")
            #expect(counters.requests.isEmpty)

            // Allowed by name: whatever it resolves to is accepted, and one of its addresses answers.
            let (allowed, _) = try await Self.dispatch(url: "http://LOCALHOST:\(port)/media", allowHosts: "[localhost]")
            #expect(allowed.reason == .extension, "\(allowed.extensionFailure ?? "")")
            #expect(allowed.deliveredAttachments.first?["type"] == "public.png")
            #expect(counters.requests == ["/media"])
        }
    }

    /// Spellings of loopback that are not dotted quads: the resolver reads them, and its answer is checked.
    @Test(arguments: ["127.1", "2130706433", "0177.0.0.1", "[::1]", "[::ffff:127.0.0.1]"])
    func otherSpellingsOfLoopbackAreRefused(host: String) async throws {
        try await MediaServer.withServer({ _, _ in }) { port, counters in
            let (result, original) = try await Self.dispatch(url: "http://\(host):\(port)/media")
            Self.expectRefused(result, original: original, rule: "non-public-address", "a loopback address")
            #expect(counters.requests.isEmpty)
        }
    }

    @Test(arguments: ["ftp://127.0.0.1/a.jpg", "file:///etc/passwd", "gopher://example.com/", "data:image/png;base64,iVBORw0KGgo="])
    func nonHTTPSchemesAreRefused(url: String) async throws {
        let (result, original) = try await Self.dispatch(url: url, allowHosts: "[127.0.0.1, example.com]")
        Self.expectRefused(result, original: original, rule: "scheme", "only http and https")
    }

    /// Redirect targets that must be refused before anything connects to them.
    @Test(arguments: [
        ("http://169.254.169.254/latest/meta-data/", "non-public-address", "link-local"),
        ("http://10.0.0.1/image.png", "non-public-address", "private"),
        ("http://192.168.1.20:8080/image.png", "non-public-address", "private"),
        ("http://[::ffff:10.0.0.1]/image.png", "non-public-address", "private"),
        ("http://[fe80::1]/image.png", "non-public-address", "link-local"),
        ("http://[fd00::5]/image.png", "non-public-address", "private"),
        ("http://0.0.0.0/image.png", "non-public-address", "unspecified"),
        ("http://224.0.0.1/image.png", "non-public-address", "multicast"),
        ("file:///etc/passwd", "scheme", "file"),
    ])
    func aRedirectToARefusedAddressIsRefused(location: String, rule: String, detail: String) async throws {
        try await MediaServer.withServer({ router, _ in
            router.get("jump") { _ in MediaServer.redirect(to: location) }
        }) { port, counters in
            let (result, original) = try await Self.dispatch(url: "http://127.0.0.1:\(port)/jump", allowHosts: "[127.0.0.0/8]")
            Self.expectRefused(result, original: original, rule: rule, detail)
            #expect(counters.requests == ["/jump"])
        }
    }

    @Test func moreThanFiveRedirectsAreRefused() async throws {
        try await MediaServer.withServer({ router, _ in
            router.get("loop/:n") { request in
                let n = Int(request.parameters["n"] ?? "") ?? 0
                return MediaServer.redirect(to: "/loop/\(n + 1)")
            }
        }) { port, counters in
            let (result, original) = try await Self.dispatch(url: "http://127.0.0.1:\(port)/loop/0", allowHosts: "[127.0.0.1/32]")
            Self.expectRefused(result, original: original, rule: "redirects", "more than 5 redirects")
            #expect(counters.requests == (0...5).map { "/loop/\($0)" })
        }
    }

    @Test func aMalformedURLFailsTheStepWithoutEchoingIt() async throws {
        let (result, original) = try await Self.dispatch(url: "not a url?token=s3cr3t")
        Self.expectRefused(result, original: original, rule: "url", "the value at media-url is not an absolute URL")
        #expect(result.extensionFailure?.contains("s3cr3t") == false)
    }

    @Test func aNullURLPassesUnchanged() async throws {
        let store = Support.temporaryDirectory("store")
        defer { try? FileManager.default.removeItem(at: store) }
        let payload = Support.alertPayload([("media-url", .null)])
        let steps = AttachmentDownloadTests.attachmentStep(store: store)
        let result = try await Support.dispatch(Support.yaml(steps: steps), payload: payload)
        #expect(result.reason == .extensionUnchanged)
    }
}
