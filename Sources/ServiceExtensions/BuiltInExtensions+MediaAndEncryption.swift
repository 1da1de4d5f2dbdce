public import Dispatcher
import Foundation
import JSON
import Notifications
public import WebhookHTTP

extension BuiltInExtensions {
    /// Registers `attachment` (rich media): its options are checked and its store directory
    /// created at start-up.
    /// - Parameters:
    ///   - client: the shared client the downloads use (its event loops, connect timeout and TLS
    ///     settings), each on a connection of its own.
    ///   - stores: the stores the steps keep their files in; sweep them for age with
    ///     ``AttachmentStores/runSweeps(every:)`` while the registry is in use (``withRegistry(maxResponseBytes:connectTimeout:connectionsPerHost:addKinds:_:)``
    ///     does). Without it, stores are still swept after each file they keep.
    public static func registerAttachment(
        in registry: inout ExtensionRegistry, client: WebhookHTTPClient, stores: AttachmentStores = AttachmentStores()
    ) {
        registry.register(kind: "attachment") { options throws(ExtensionOptionsError) in
            let settings = try AttachmentSettings(options: options)
            let store = try stores.store(for: settings)
            // One instance per notification: each keeps its entering content for the best attempt.
            return { AttachmentExtension(settings: settings, client: client, store: store) }
        }
    }

    /// Where a step of a built-in kind finds the media URL it downloads (the `attachment` kind's
    /// `urlPath`, by default `media-url`), nil for kinds that download none: what
    /// ``PayloadLint`` checks media URLs at.
    package static func mediaURLPath(of step: ExtensionStep) -> String? {
        guard step.kind == "attachment" else { return nil }
        return step.options["urlPath"]?.stringValue ?? AttachmentSettings.defaultURLPath
    }

    /// Registers `decrypt` (end-to-end encryption): its keys are read at start-up, from files or
    /// from `environment` (the process environment unless given).
    public static func registerDecrypt(
        in registry: inout ExtensionRegistry,
        environment: [String: String]? = nil
    ) {
        let environment = environment ?? ProcessInfo.processInfo.environment
        registry.register(kind: "decrypt") { options throws(ExtensionOptionsError) in
            // Stateless once the keys are read: one instance serves every request.
            let decrypt = try DecryptExtension(options: options, environment: environment)
            return { decrypt }
        }
    }
}
