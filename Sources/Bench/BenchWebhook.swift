import ArgumentParser
import Foundation
import Hummingbird
import JSON
import Logging
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
            let router = Router()
            router.post("hook") { request, _ -> Response in
                try await Task.sleep(for: delay)
                let body = try await request.body.collect(upTo: 1 << 20)
                guard var payload = (try? JSONValue(parsing: Array(buffer: body)))?.objectValue?["payload"]?.objectValue else {
                    return Response(status: .badRequest)
                }
                payload["bench"] = true
                let text = #"{"payload":"# + String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self) + "}"
                return Response(status: .ok, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(string: text)))
            }
            var logger = Logger(label: "bench-webhook")
            logger.logLevel = .critical
            let app = Application(
                router: router,
                configuration: .init(address: .hostname("127.0.0.1", port: 0), backlog: 4_096),
                onServerRunning: { channel in
                    // Written unbuffered: `bench run` waits for this line.
                    FileHandle.standardOutput.write(Data("port: \(channel.localAddress?.port ?? 0)\n".utf8))
                },
                logger: logger
            )
            // Runs until `bench run` terminates it. No graceful shutdown: SIGTERM's default action
            // ends the process at once, where a graceful one would wait for the calls in progress,
            // which in the deadline scenario never answer.
            try await app.runService(gracefulShutdownSignals: [])
        }
    }
}
