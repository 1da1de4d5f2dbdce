import ArgumentParser
import Foundation
import HTTPServer
import JSON
import Logging
import NIOCore
import NIOHTTP1
import Notifications

extension BenchCommand {
    /// `bench webhook`: the loopback webhook of the extensions and deadline scenarios, run by
    /// `bench run` in a process of its own.
    struct Webhook: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "webhook",
            abstract: "Serve the benchmarks' webhook on loopback (started by `bench run`).",
            discussion: "Prints `port: N` once listening, then answers POST /hook with the payload plus a key after --delay-ms.",
            shouldDisplay: false
        )

        @Option(help: "Milliseconds to wait before answering.")
        var delayMs: Int = 1_000

        func run() async throws {
            let delay = Duration.milliseconds(delayMs)
            var router = Router()
            router.post("hook") { request in
                try await Task.sleep(for: delay)
                guard var payload = (try? JSONValue(parsing: Array(buffer: request.body)))?.objectValue?["payload"]?.objectValue else {
                    return Response(status: .badRequest)
                }
                payload["bench"] = true
                let text = #"{"payload":"# + String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self) + "}"
                return Response(status: .ok, headers: ["content-type": "application/json"], body: ByteBuffer(string: text))
            }
            var logger = Logger(label: "bench-webhook")
            logger.logLevel = .critical
            var configuration = Server.Configuration(host: "127.0.0.1", port: 0)
            // The scenarios open thousands of connections at once.
            configuration.backlog = 4_096
            let server = Server(configuration: configuration, router: router, logger: logger) { port in
                // Written unbuffered: `bench run` waits for this line.
                FileHandle.standardOutput.write(Data("port: \(port)\n".utf8))
            }
            // Runs until `bench run` terminates it, outside any ServiceGroup, so no graceful
            // shutdown: SIGTERM's default action ends the process at once, where a graceful one
            // would wait for the calls in progress, which in the deadline scenario never answer.
            try await server.run()
        }
    }
}
