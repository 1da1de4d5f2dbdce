/// Something that waits in a pool's queue and may stop waiting (a cancelled call).
package protocol PoolWaiter {
    /// Whether it still wants a connection; one that does not is dropped when reached.
    var isPending: Bool { get }
}

/// The bookkeeping of one endpoint's connections, as a value: which are idle, how many exist, who
/// waits. Every transition is O(1) (amortised), whatever the number of connections: no scan.
///
/// Transitions return what to do; the pool does it after releasing its lock.
package struct ConnectionPoolState<Connection: AnyObject, Waiter: PoolWaiter> {
    /// What to do with a call that asks for a connection.
    package enum Acquired {
        /// Run it on this idle connection.
        case use(Connection)
        /// Open a connection for it (its slot is counted already).
        case connect
        /// Wait: the pool is at its limit. It is queued.
        case wait
        /// Fail it: the pool is shut down.
        case shutDown
    }

    /// What to do after a connection is given back or a slot is freed.
    package enum Freed {
        /// Nothing: the connection is idle, or no one waits.
        case none
        /// Run `waiter` on `connection`.
        case use(Connection, Waiter)
        /// Open a connection for `waiter` (its slot is counted already).
        case connect(Waiter)
    }

    /// The most connections open or being opened at once.
    package let limit: Int
    /// Connections open or being opened.
    package private(set) var count = 0
    /// Idle connections, the most recently used last (taken first, so the others can time out).
    private var idle: [Connection] = []
    /// Each idle connection's index in ``idle``, so that one that closes leaves in O(1).
    private var idleIndex: [ObjectIdentifier: Int] = [:]
    /// Calls waiting for a connection, in arrival order.
    private var waiters: [Waiter] = []
    /// Where the queue starts in ``waiters`` (taken from the front without shifting).
    private var waitersStart = 0
    /// Set by ``shutDown()``.
    package private(set) var isShutDown = false

    /// A pool of at most `limit` connections.
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many connections are idle.
    package var idleCount: Int { idle.count }
    /// How many calls wait (cancelled ones included until reached).
    package var waitingCount: Int { waiters.count - waitersStart }

    /// A connection for `waiter`: an idle one (unless `preferNew` and a new one may be opened), a
    /// new one, or a place in the queue.
    package mutating func acquire(_ waiter: Waiter, preferNew: Bool = false) -> Acquired {
        if isShutDown { return .shutDown }
        if preferNew, count < limit {
            count += 1
            return .connect
        }
        if let connection = idle.popLast() {
            idleIndex[ObjectIdentifier(connection)] = nil
            return .use(connection)
        }
        if count < limit {
            count += 1
            return .connect
        }
        waiters.append(waiter)
        return .wait
    }

    /// `connection` finished a call and can take another: the next waiter gets it, or it goes idle.
    package mutating func release(_ connection: Connection) -> Freed {
        if let waiter = nextWaiter() { return .use(connection, waiter) }
        idleIndex[ObjectIdentifier(connection)] = idle.count
        idle.append(connection)
        return .none
    }

    /// `connection` closed (idle or not): its slot goes to the next waiter, as a new connection.
    package mutating func closed(_ connection: Connection) -> Freed {
        if let index = idleIndex.removeValue(forKey: ObjectIdentifier(connection)) {
            let last = idle.removeLast()
            if index < idle.count {
                idle[index] = last
                idleIndex[ObjectIdentifier(last)] = index
            }
        }
        return slotFreed()
    }

    /// A connection being opened failed: its slot goes to the next waiter, as a new connection.
    package mutating func connectFailed() -> Freed {
        slotFreed()
    }

    /// Shuts the pool down: what is idle and what waits, for the pool to close and fail.
    package mutating func shutDown() -> (idle: [Connection], waiters: [Waiter]) {
        isShutDown = true
        let result = (idle, Array(waiters[waitersStart...]))
        idle = []
        idleIndex = [:]
        waiters = []
        waitersStart = 0
        return result
    }

    private mutating func slotFreed() -> Freed {
        count -= 1
        guard !isShutDown, let waiter = nextWaiter() else { return .none }
        count += 1
        return .connect(waiter)
    }

    /// The first waiter still pending, dropping those that stopped waiting.
    private mutating func nextWaiter() -> Waiter? {
        while waitersStart < waiters.count {
            let waiter = waiters[waitersStart]
            waitersStart += 1
            if waitersStart == waiters.count {
                waiters.removeAll(keepingCapacity: waiters.count <= 1_024)
                waitersStart = 0
            } else if waitersStart >= 1_024, waitersStart * 2 >= waiters.count {
                // Compact once the consumed front outweighs the rest: amortised O(1) per waiter.
                waiters.removeFirst(waitersStart)
                waitersStart = 0
            }
            if waiter.isPending { return waiter }
        }
        return nil
    }
}
