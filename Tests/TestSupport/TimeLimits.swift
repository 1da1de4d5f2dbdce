import Foundation

/// A bounded wait ran out: the condition being awaited never became true.
public struct TimedOut: Error, CustomStringConvertible {
    /// What was awaited.
    public var what: String

    public init(what: String) { self.what = what }

    public var description: String { "timed out waiting for \(what)" }
}

/// Runs `operation`, failing with ``TimedOut`` if it has not finished after `limit` (a backstop, not a synchronisation).
public func withTimeLimit<T: Sendable>(
    _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: limit)
            throw TimedOut(what: what)
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw TimedOut(what: what) }
        return result
    }
}

/// Polls `condition` every 20 ms until it holds, failing after `limit`.
public func eventually(_ what: String, limit: Duration = .seconds(60), _ condition: @escaping @Sendable () async throws -> Bool) async throws {
    try await withTimeLimit(limit, what) {
        while try await !condition() {
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
