import HTTPServer
import Logging
import NIOCore
import NIOHTTP1
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// The package's HTTP server over loopback: what a handler sees, what a client gets, and how it stops.
@Suite struct ServerTests {
    static let logger = LoopbackServer.quietLogger

    /// A router echoing what it was sent, streaming on request, and failing on request.
    static var router: Router {
        var router = Router()
        router.post("echo") { request in
            var headers: HTTPHeaders = ["x-authorization": request.headers.first(name: "authorization") ?? ""]
            headers.add(name: "x-uri", value: request.uri)
            return Response(status: .created, headers: headers, body: request.body)
        }
        router.get("/items/:id") { request in
            Response(body: ByteBuffer(string: "item \(request.parameters["id"] ?? "")"))
        }
        router.get("stream/:chunks") { request in
            let chunks = Int(request.parameters["chunks"] ?? "") ?? 0
            return Response(headers: ["content-type": "application/octet-stream"], stream: { writer in
                for index in 0..<chunks {
                    try await writer.write(ByteBuffer(repeating: UInt8(truncatingIfNeeded: index), count: 16_384))
                }
            })
        }
        router.get("fail") { _ in throw Failure() }
        return router
    }

    struct Failure: Error {}

    @Test func aRequestsBodyHeadersAndTargetReachTheHandler() async throws {
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let response = try #require(
                    try await connection.send("/echo?x=1", method: .POST, headers: ["authorization": "Bearer t"], body: #"{"a":1}"#))
                #expect(response.head.status == .created)
                #expect(response.text == #"{"a":1}"#)
                #expect(response.head.headers.first(name: "x-authorization") == "Bearer t")
                #expect(response.head.headers.first(name: "x-uri") == "/echo?x=1")
                #expect(response.head.headers.first(name: "content-length") == "7")
            }
        }
    }

    @Test func aRoutesParametersReachTheHandler() async throws {
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let item = try await connection.send("/items/42")
                #expect(item?.text == "item 42")
            }
        }
    }

    @Test func anUnknownPathOrMethodIs404() async throws {
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let unknownPath = try await connection.send("/nowhere")
                #expect(unknownPath?.head.status == .notFound)
                let wrongMethod = try await connection.send("/echo")
                #expect(wrongMethod?.head.status == .notFound)
                let longerPath = try await connection.send("/items/1/more")
                #expect(longerPath?.head.status == .notFound)
            }
        }
    }

    @Test func aHandlerThatThrowsIsAnswered500() async throws {
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let failed = try await connection.send("/fail")
                #expect(failed?.head.status == .internalServerError)
                // The connection stays usable.
                let next = try await connection.send("/items/1")
                #expect(next?.head.status == .ok)
            }
        }
    }

    @Test func keepAliveServesRequestsOnOneConnectionUntilTheClientSaysClose() async throws {
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                for index in 0..<3 {
                    let response = try #require(try await connection.send("/items/\(index)"))
                    #expect(response.text == "item \(index)")
                    #expect(!response.head.headers.contains(name: "connection"))
                }
                let last = try #require(try await connection.send("/items/9", headers: ["connection": "close"]))
                #expect(last.text == "item 9")
                #expect(last.head.headers.first(name: "connection") == "close")
                #expect(try await connection.isClosedByServer())
            }
        }
    }

    @Test func aStreamedBodyArrivesWholeAndChunked() async throws {
        let chunks = 200
        try await Server.with(router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let response = try #require(try await connection.send("/stream/\(chunks)"))
                #expect(response.head.headers.first(name: "transfer-encoding") == "chunked")
                #expect(response.body.count == chunks * 16_384)
                let expected = (0..<chunks).flatMap { [UInt8](repeating: UInt8(truncatingIfNeeded: $0), count: 16_384) }
                #expect(response.body == expected)
                // And the connection goes on.
                let next = try await connection.send("/items/1")
                #expect(next?.text == "item 1")
            }
        }
    }

    @Test func aBodyOverTheLimitIs413AndTheConnectionCloses() async throws {
        var configuration = Server.Configuration()
        configuration.maxRequestBodyBytes = 10
        try await Server.with(configuration, router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let response = try #require(try await connection.send("/echo", method: .POST, body: String(repeating: "x", count: 11)))
                #expect(response.head.status == .payloadTooLarge)
                #expect(response.head.headers.first(name: "connection") == "close")
                #expect(try await connection.isClosedByServer())
            }
        }
    }

    @Test func theServerNameIsSent() async throws {
        var configuration = Server.Configuration()
        configuration.serverName = "test-server"
        try await Server.with(configuration, router: Self.router, logger: Self.logger) { port in
            try await RawConnection.with(port: port) { connection in
                let answer = try await connection.send("/items/1")
                #expect(answer?.head.headers.first(name: "server") == "test-server")
            }
        }
    }

    @Test func gracefulShutdownClosesIdleConnectionsLetsAResponseInProgressFinishAndEndsRun() async throws {
        let entered = Gate()
        let release = Gate()
        var router = Router()
        router.get("slow") { _ in
            entered.open()
            await release.wait()
            return Response(body: ByteBuffer(string: "done"))
        }
        router.get("fast") { _ in Response() }
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let server = Server(configuration: Server.Configuration(), router: router, logger: Self.logger) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let services = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: Self.logger))
        // A backstop, not a timing claim: beside CPU hogs the test process's pool can leave a test
        // waiting for a minute and more (docs/testing.md, "A test's deadline is not a timing test").
        try await withTimeLimit(.seconds(300), "the server to stop") {
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await services.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())
                try await RawConnection.with(port: port) { idle in
                    let first = try await idle.send("/fast")
                    #expect(first?.head.status == .ok)
                    try await withThrowingTaskGroup(of: RawConnection.Received?.self) { requests in
                        requests.addTask { try await RawConnection.with(port: port) { try await $0.send("/slow") } }
                        await entered.wait()
                        await services.triggerGracefulShutdown()
                        // The idle connection is closed at once; the busy one answers first.
                        #expect(try await idle.isClosedByServer())
                        release.open()
                        let response = try #require(try await requests.next() ?? nil)
                        #expect(response.text == "done")
                        #expect(response.head.headers.first(name: "connection") == "close")
                    }
                }
                // run() returned: the group's only service ended.
                try await group.waitForAll()
            }
        }
    }
}
