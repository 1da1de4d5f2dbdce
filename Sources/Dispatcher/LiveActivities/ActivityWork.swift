import Notifications

/// What a Live Activity push or a valid broadcast leaves to do (``DispatchStep/activity(_:)``):
/// the commands, each to execute against the activity of its token, in order, and the record's own
/// outputs that follow theirs.
///
/// Offline, every command is executed at once. The worker executes a command inline when its
/// activity token hashes to the record's own partition, and otherwise produces
/// ``ActivityCommand/record(topic:)`` to the internal topic, whose owner executes it.
package struct ActivityWork: Sendable {
    /// The commands, in order: one for a device's push, one per subscribed activity (ascending
    /// token) for a broadcast.
    package var commands: [ActivityCommand]
    /// Outputs of the record itself, written after the commands' results: the stored tombstone of a
    /// stored Live Activity push delivered when its device came back online (section 16.3).
    package var trailing: [OutputRecord]

    /// Work of `commands`, then `trailing`.
    package init(commands: [ActivityCommand], trailing: [OutputRecord] = []) {
        self.commands = commands
        self.trailing = trailing
    }
}
