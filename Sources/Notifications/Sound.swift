public import JSON

/// The `aps.sound` value: a sound file name, or the critical-alert object.
public enum Sound: Sendable, Hashable {
    /// A sound file name (`default` for the system sound).
    case named(String)
    /// The object with `critical`, `name` and `volume`.
    case critical(CriticalSound)
}

/// The critical-alert sound object; each documented key is optional, unknown keys are kept.
public struct CriticalSound: Sendable, Hashable {
    /// `critical`: 1 for a critical alert.
    public var critical: JSONNumber?
    /// `name`: the sound file name.
    public var name: String?
    /// `volume`: 0 to 1.
    public var volume: JSONNumber?
    /// Keys not documented, kept as they were.
    public var otherKeys: JSONObject = JSONObject()

    /// Makes an empty sound object.
    package init() {}
}
