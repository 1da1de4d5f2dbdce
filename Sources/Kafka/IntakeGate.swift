import Foundation

/// Paces the poll thread's intake of messages: the owner can hold it (flow control), and a batch
/// is handed over only once the reader has taken the one before.
///
/// The hand-off buffer itself is unbounded; this gate is what keeps it short. Without the second
/// rule the poll thread drains librdkafka's prefetched queue into the buffer as fast as it can, and
/// a hold arrives only after the owner has read (and taken into flight) everything buffered: with
/// a backlog that was every prefetched record, whatever the owner's limit.
///
/// While the poll thread waits here it does not poll at all: librdkafka keeps what it already
/// fetched and stops fetching once its own queue limits are reached (`queued.min.messages`,
/// `queued.max.messages.kbytes`), and nothing fetched is thrown away. Either wait lasting long
/// (held, or a batch the reader has not taken) becomes a long hold, which polls on with the
/// assignment paused (``LongHold``).
final class IntakeGate: @unchecked Sendable {
    // @unchecked Sendable: `held` and `unreadBatches` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var held = false
    /// Message batches handed over and not yet taken by the reader.
    private var unreadBatches = 0

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

    /// The poll thread handed a batch of messages over.
    func handedOver() {
        condition.lock()
        unreadBatches += 1
        condition.unlock()
    }

    /// The reader took a batch of messages; wakes the poll thread if it waits for that.
    func taken() {
        condition.lock()
        unreadBatches -= 1
        if unreadBatches == 0 { condition.broadcast() }
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

    /// Waits until the reader has taken every batch handed over (or a change, or a wake-up), at
    /// most `limit` seconds.
    /// - Returns: whether the next batch may be handed over now (nothing unread, intake not held).
    func waitForReader(limit: TimeInterval) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        if unreadBatches > 0, !held { _ = condition.wait(until: Date(timeIntervalSinceNow: limit)) }
        return unreadBatches == 0 && !held
    }
}
