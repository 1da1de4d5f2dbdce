import NIOCore
import Synchronization

/// The server's open connections and whether each is answering a request, so that a graceful
/// shutdown can close the idle ones at once, let the busy ones finish their response, and know
/// when none is left.
///
/// Connections are registered when accepted (in the child channel's initializer), before the
/// accept loop hands them over: one accepted as the server stops, and never handed over, is still
/// closed by ``closeAll()``.
final class ConnectionRegistry: Sendable {
    /// The state machine: what is open, and whether shutdown has begun.
    private struct State {
        var connections: [ObjectIdentifier: (channel: any Channel, busy: Bool)] = [:]
        var shuttingDown = false
    }

    private let state = Mutex(State())
    /// Finished once shutdown has begun and no connection is left.
    private let drainedSignal: AsyncStream<Void>
    private let drainedContinuation: AsyncStream<Void>.Continuation

    init() {
        (drainedSignal, drainedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// Registers an accepted connection; false (and the caller closes it) once shutdown has begun.
    func accepted(_ channel: any Channel) -> Bool {
        state.withLock { state in
            guard !state.shuttingDown else { return false }
            state.connections[ObjectIdentifier(channel)] = (channel, false)
            return true
        }
    }

    /// Marks the connection busy with a request: shutdown lets it finish its response.
    func requestStarted(_ channel: any Channel) {
        state.withLock { $0.connections[ObjectIdentifier(channel)]?.busy = true }
    }

    /// Whether shutdown has begun: a response then says `Connection: close`.
    var isShuttingDown: Bool {
        state.withLock { $0.shuttingDown }
    }

    /// Marks the connection idle again; true when the server is stopping and it must close.
    func responseFinished(_ channel: any Channel) -> Bool {
        state.withLock { state in
            state.connections[ObjectIdentifier(channel)]?.busy = false
            return state.shuttingDown
        }
    }

    /// Forgets a connection that ended.
    func closed(_ channel: any Channel) {
        let drained = state.withLock { state in
            state.connections[ObjectIdentifier(channel)] = nil
            return state.shuttingDown && state.connections.isEmpty
        }
        if drained { drainedContinuation.finish() }
    }

    /// Begins shutdown: new connections are refused and idle ones closed; busy ones close after
    /// their response.
    func beginShutdown() {
        let (idle, drained) = state.withLock { state in
            state.shuttingDown = true
            return (state.connections.values.filter { !$0.busy }.map(\.channel), state.connections.isEmpty)
        }
        for channel in idle { channel.close(promise: nil) }
        if drained { drainedContinuation.finish() }
    }

    /// Closes every connection left, busy or not (the grace period is over, or the server failed).
    func closeAll() {
        let channels = state.withLock { state in
            state.shuttingDown = true
            return state.connections.values.map(\.channel)
        }
        for channel in channels { channel.close(promise: nil) }
    }

    /// Waits until shutdown has begun and every connection has closed, for at most `limit`; false
    /// when the limit passed first (or the task was cancelled).
    func drained(within limit: Duration) async -> Bool {
        let signal = drainedSignal
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await _ in signal {}
                return !Task.isCancelled
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            defer { group.cancelAll() }
            return await group.next() ?? false
        }
    }
}
