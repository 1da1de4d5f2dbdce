import Synchronization

/// Where results arrive from many places (the tasks of service extensions, each ending on its
/// own) and are taken, all that arrived so far at once, by one reader.
///
/// Taking them together makes one producer batch, one acknowledgement wait and one pass under the
/// worker's lock out of the extension results that arrived meanwhile, instead of one each.
final class ResultInbox<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var reader: CheckedContinuation<[Element], Never>?
        var isClosed = false
    }

    private let state = Mutex(State())

    /// Adds an element; wakes the reader if it waits.
    func push(_ element: Element) {
        let reader = state.withLock { state -> CheckedContinuation<[Element], Never>? in
            guard let reader = state.reader else {
                state.items.append(element)
                return nil
            }
            state.reader = nil
            return reader
        }
        reader?.resume(returning: [element])
    }

    /// Every element that arrived since the last call, waiting for one if none did; empty once
    /// the reader's task is cancelled. One reader at a time.
    func next() async -> [Element] {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> [Element]? in
                    if !state.items.isEmpty || state.isClosed || Task.isCancelled {
                        defer { state.items.removeAll() }
                        return state.items
                    }
                    state.reader = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let reader = state.withLock { state in
                state.isClosed = true
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(returning: [])
        }
    }
}
