// A program that embeds the dispatcher: one worker of the consumer group, as `serve` runs it
// (metrics, health, the metrics topic), with a service extension of its own written in Swift.
//
//     EmbeddedDispatcher dispatcher.yaml
//
// where the configuration gives an app's alerts to the extension's kind:
//
//     apps:
//       com.example.news:
//         serviceExtension: {kind: signature, signature: "(Example News)"}
import Dispatcher
import DispatcherService
import Foundation
import JSON
import Logging
import UnixSignals

/// Appends a signature to the body of the alert it is given. Stateless: one instance could serve
/// every request, but the factory below makes one per request, as Apple makes one per notification.
struct SignatureExtension: ServiceExtension {
    let signature: String

    func didReceive(_ request: ServiceExtensionRequest) async throws -> NotificationContent {
        var content = request.content
        guard var aps = content.payload["aps"]?.objectValue else { return content }
        // The alert is an object with a body, or the body alone as a string.
        if var alert = aps["alert"]?.objectValue, let body = alert["body"]?.stringValue {
            alert["body"] = .string("\(body) \(signature)")
            aps["alert"] = .object(alert)
        } else if let body = aps["alert"]?.stringValue {
            aps["alert"] = .string("\(body) \(signature)")
        } else {
            return content  // nothing to sign: the original is delivered
        }
        content.payload["aps"] = .object(aps)
        return content
    }
}

LoggingSystem.bootstrap(StreamLogHandler.standardError)
let logger = Logger(label: "embedded-dispatcher")
let path = CommandLine.arguments.dropFirst().first ?? "Config/dispatcher.yaml"
do {
    let configuration = try Configuration(contentsOfFile: path)
    let application = DispatcherApplication(
        configuration: configuration,
        logger: logger,
        extensionKinds: { registry in
            registry.register(kind: "signature") { options throws(ExtensionOptionsError) in
                try options.rejectUnknownKeys(allowed: ["signature"])
                let signature = try options.string("signature")  // checked once, at start-up
                return { SignatureExtension(signature: signature) }  // called per request
            }
        },
        // Run alone: SIGTERM or SIGINT drains the worker, commits and leaves the group.
        gracefulShutdownSignals: [.sigterm, .sigint]
    )
    try await application.run()
} catch {
    FileHandle.standardError.write(Data("embedded-dispatcher: \(error)\n".utf8))
    exit(1)
}
