import Foundation
import HTTPServer
import JSON
import NIOCore
import NIOHTTP1
import Notifications
import Synchronization
import TestSupport

/// A webhook extension endpoint on loopback: answers `POST /hook` after `delay` with the payload
/// it was sent plus `"hooked": true` (so the content differs), and `POST /never` not at all. It
/// counts the calls and the most it had in progress at once.
final class WebhookServer: Sendable {
    private struct Counters {
        var calls = 0
        var inProgress = 0
        var mostInProgress = 0
    }

    private let counters = Mutex(Counters())
    /// Set when the test is done: the never-answering route then ends, so the server's graceful
    /// shutdown (which waits for requests in progress) can complete.
    private let stopping = Mutex(false)

    /// Calls received so far.
    var calls: Int { counters.withLock { $0.calls } }
    /// The most calls in progress at the same time so far.
    var mostInProgress: Int { counters.withLock { $0.mostInProgress } }

    /// Runs the server for the duration of `body`, which gets its base URL.
    func run<Result: Sendable>(delay: Duration, _ body: (String) async throws -> Result) async throws -> Result {
        var router = Router()
        router.post("hook") { request -> Response in
            self.counters.withLock {
                $0.calls += 1
                $0.inProgress += 1
                $0.mostInProgress = max($0.mostInProgress, $0.inProgress)
            }
            defer { self.counters.withLock { $0.inProgress -= 1 } }
            try await Task.sleep(for: delay)
            let body = request.body
            let call = try JSONValue(parsing: Array(buffer: body))
            guard var payload = call.objectValue?["payload"]?.objectValue else {
                return Response(status: .badRequest)
            }
            payload["hooked"] = true
            let text = String(decoding: JSONValue.object(payload).serialized(), as: UTF8.self)
            return LoopbackServer.json(#"{"payload":\#(text)}"#)
        }
        router.post("never") { _ -> Response in
            self.counters.withLock { $0.calls += 1 }
            // Does not answer while the test runs: the worker must give up at the deadline.
            while !self.stopping.withLock({ $0 }) {
                try await Task.sleep(for: .milliseconds(50))
            }
            return Response(status: .noContent)
        }
        return try await LoopbackServer.with(router) { baseURL in
            defer { self.stopping.withLock { $0 = true } }
            return try await body(baseURL)
        }
    }
}
