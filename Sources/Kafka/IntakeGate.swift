import Foundation

/// Lets the consumer's owner stop and restart the poll thread's intake of messages, and wakes the
/// poll thread when it has something else to do (releases, close).
///
/// While held, the poll thread does not poll at all: librdkafka keeps what it already fetched and
/// stops fetching once its own queue limits are reached (`queued.min.messages`,
/// `queued.max.messages.kbytes`), and nothing fetched is thrown away.
final class IntakeGate: @unchecked Sendable {
    // @unchecked Sendable: `held` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var held = false

    /// Holds (`true`) or restarts (`false`) the intake, and wakes the poll thread.
    func set(held: Bool) {
        condition.lock()
        self.held = held
        condition.broadcast()
        condition.unlock()
    }

    /// Wakes the poll thread if it waits.
    func wake() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// While the intake is held, waits for a change or a wake-up, at most `limit` seconds.
    /// - Returns: whether the intake is (still) held.
    func waitWhileHeld(limit: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if held { _ = condition.wait(until: Date(timeIntervalSinceNow: limit)) }
        return held
    }
}
