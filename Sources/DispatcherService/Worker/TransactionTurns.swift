/// Runs the exactly-once worker's transaction commits one at a time: the periodic one, a
/// revocation's and the shutdown's may be asked for at once, and a transaction is committed (and
/// the next begun) by one of them at a time.
actor TransactionTurns {
    /// Whether a commit runs.
    private var busy = false
    /// Commits waiting for their turn, in the order they asked.
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once no other body runs.
    func run(_ body: @Sendable () async -> Void) async {
        while busy {
            await withCheckedContinuation { waiting.append($0) }
        }
        busy = true
        await body()
        busy = false
        if !waiting.isEmpty { waiting.removeFirst().resume() }
    }
}
