/// The `aps.interruption-level` values.
public enum InterruptionLevel: String, Sendable, CaseIterable {
    /// Added to the list without lighting the screen.
    case passive
    /// Presented at once (the default).
    case active
    /// Presented at once, breaking through Focus.
    case timeSensitive = "time-sensitive"
    /// Presented at once with sound, breaking through the mute switch.
    case critical
}
