import Testing
import WebhookHTTP

/// The webhook client's pool bookkeeping as a pure value: limits, reuse order, waiters, closes.
@Suite("Webhook connection pool state")
struct ConnectionPoolStateTests {
    final class Connection {}

    /// A waiting call; `pending` false once its caller gave up.
    struct Waiter: PoolWaiter, Equatable {
        var id: Int
        var pending = true
        var isPending: Bool { pending }
    }

    typealias State = ConnectionPoolState<Connection, Waiter>

    @Test("new connections up to the limit, then waiting; a released connection goes to the first waiter")
    func limitAndWaiters() {
        var state = State(limit: 2)
        guard case .connect = state.acquire(Waiter(id: 1)), case .connect = state.acquire(Waiter(id: 2)) else {
            Issue.record("expected two new connections")
            return
        }
        guard case .wait = state.acquire(Waiter(id: 3)), case .wait = state.acquire(Waiter(id: 4)) else {
            Issue.record("expected waiting at the limit")
            return
        }
        #expect(state.count == 2)
        let first = Connection()
        guard case .use(let given, let waiter) = state.release(first) else {
            Issue.record("expected the first waiter to get the connection")
            return
        }
        #expect(given === first && waiter.id == 3)
        #expect(state.waitingCount == 1)
    }

    @Test("the most recently released idle connection is taken first, so the others can time out")
    func lastInFirstOut() {
        var state = State(limit: 3)
        let (a, b) = (Connection(), Connection())
        _ = state.acquire(Waiter(id: 1))
        _ = state.acquire(Waiter(id: 2))
        _ = state.release(a)
        _ = state.release(b)
        guard case .use(let taken) = state.acquire(Waiter(id: 3)) else {
            Issue.record("expected an idle connection")
            return
        }
        #expect(taken === b)
        // preferNew opens one while the limit allows, idle ones notwithstanding.
        guard case .connect = state.acquire(Waiter(id: 4), preferNew: true) else {
            Issue.record("expected a new connection")
            return
        }
        #expect(state.count == 3)
    }

    @Test("an idle connection that closes leaves the pool; its slot opens a connection for a waiter")
    func closedIdle() {
        var state = State(limit: 2)
        let (a, b) = (Connection(), Connection())
        _ = state.acquire(Waiter(id: 1))
        _ = state.acquire(Waiter(id: 2))
        _ = state.release(a)
        _ = state.release(b)
        guard case .none = state.closed(a) else {
            Issue.record("expected nothing to do")
            return
        }
        #expect(state.count == 1 && state.idleCount == 1)
        guard case .use(let taken) = state.acquire(Waiter(id: 3)) else {
            Issue.record("expected the remaining idle connection")
            return
        }
        #expect(taken === b)
        _ = state.acquire(Waiter(id: 4))
        guard case .wait = state.acquire(Waiter(id: 5)) else {
            Issue.record("expected waiting")
            return
        }
        guard case .connect(let waiter) = state.closed(b) else {
            Issue.record("expected a new connection for the waiter")
            return
        }
        #expect(waiter.id == 5 && state.count == 2)
    }

    @Test("waiters that gave up are skipped; a failed connect frees its slot")
    func cancelledWaiters() {
        var state = State(limit: 1)
        _ = state.acquire(Waiter(id: 1))
        _ = state.acquire(Waiter(id: 2, pending: false))
        _ = state.acquire(Waiter(id: 3))
        guard case .connect(let waiter) = state.connectFailed() else {
            Issue.record("expected a connection for the pending waiter")
            return
        }
        #expect(waiter.id == 3 && state.count == 1 && state.waitingCount == 0)
        guard case .none = state.connectFailed() else {
            Issue.record("expected nothing left to do")
            return
        }
        #expect(state.count == 0)
    }

    @Test("thousands of waiters and connections: every transition stays O(1), the queue compacts")
    func many() {
        var state = State(limit: 10_000)
        let connections = (0..<10_000).map { _ in Connection() }
        for id in 0..<10_000 { _ = state.acquire(Waiter(id: id)) }
        for id in 0..<5_000 { _ = state.acquire(Waiter(id: 10_000 + id)) }
        #expect(state.waitingCount == 5_000)
        var served = 0
        for connection in connections {
            if case .use = state.release(connection) { served += 1 }
        }
        #expect(served == 5_000 && state.idleCount == 5_000 && state.waitingCount == 0)
        for connection in connections { _ = state.closed(connection) }
        #expect(state.idleCount == 0 && state.count == 0)
    }

    @Test("shut down: idle connections and waiters handed back, later calls refused")
    func shutDown() {
        var state = State(limit: 1)
        _ = state.acquire(Waiter(id: 1))
        _ = state.acquire(Waiter(id: 2))
        let (idle, waiters) = state.shutDown()
        #expect(idle.isEmpty && waiters == [Waiter(id: 2)])
        guard case .shutDown = state.acquire(Waiter(id: 3)) else {
            Issue.record("expected refusal")
            return
        }
    }
}
