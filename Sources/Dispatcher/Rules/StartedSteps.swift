/// The steps of one input record started together (a devices record's stored deliveries, section
/// 16.3): the decided ones as they are, Live Activity work executed by the caller's rule, and the
/// service extensions, which run together, each under its own deadline.
///
/// Offline `dispatch` and the worker both start several steps this way; they differ only in how
/// Live Activity work is executed (offline at once, in the worker where the activity is owned).
package struct StartedSteps: Sendable {
    /// The results in step order, nil where an extension runs.
    private var parts: [DispatchResult?] = []
    /// The extensions, with their places in ``parts``.
    private var pending: [(index: Int, run: PendingExtension)] = []

    /// Starts `steps`, executing Live Activity work with `execute`.
    package init(_ steps: [DispatchStep], execute: (ActivityWork) -> DispatchResult) {
        for step in steps {
            switch step {
            case .decided(let result): parts.append(result)
            case .activity(let work): parts.append(execute(work))
            case .extensionNeeded(let run):
                pending.append((parts.count, run))
                parts.append(nil)
            }
        }
    }

    /// The results in step order, when no step needs an extension; nil otherwise.
    package var results: [DispatchResult]? {
        pending.isEmpty ? parts.compactMap { $0 } : nil
    }

    /// Runs the extensions together and returns every result in step order: the longest of
    /// their deadlines bounds the wait.
    package func finish() async -> [DispatchResult] {
        var finished = parts
        await withTaskGroup(of: (Int, DispatchResult).self) { group in
            for (index, run) in pending { group.addTask { (index, await run.run()) } }
            for await (index, result) in group { finished[index] = result }
        }
        return finished.compactMap { $0 }
    }
}

extension DispatchResult {
    /// One input record's several results as one (``Decision/several(_:)``), their outputs in order.
    package init(severalOf parts: [DispatchResult]) {
        self.init(.several(parts), outputs: parts.flatMap(\.outputs))
    }
}
