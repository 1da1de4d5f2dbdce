/// Decides which extension failures are logged: at most one per app, category and step in each
/// interval, the next one carrying how many were left out. A value, tested as one; the
/// ``ExtensionFailureLog`` holds it behind a lock and writes what it decides.
///
/// Categories come from payloads, so the keys it tracks are bounded: when ``maxKeys`` windows
/// are open, failures of further categories share one key per app and step (category
/// ``otherCategories``).
struct ExtensionFailureLimiter: Sendable {
    /// What a failure is logged under.
    struct Key: Sendable, Hashable {
        /// The bundle ID.
        var app: String
        /// The request's category (nil when it has none).
        var category: String?
        /// The failed step's name.
        var step: String
    }

    /// A log line to write.
    enum Line: Sendable, Hashable {
        /// A failure: its key, kind, and how many failures of the key went unlogged before it.
        case failure(Key, kind: String, suppressed: Int)
        /// A key's window was dropped to make room while `count` of its failures were unlogged.
        case suppressedOnly(Key, count: Int)
    }

    /// The category failures share once ``maxKeys`` windows are open.
    static let otherCategories = "(other categories)"

    /// The length of a window.
    let interval: Duration
    /// The most windows kept open at once (the overflow keys aside).
    let maxKeys: Int

    /// One key's window: when its last logged failure was, and how many failed since unlogged.
    private struct Window: Sendable {
        var opened: ContinuousClock.Instant
        var suppressed: Int
    }

    private var windows: [Key: Window] = [:]

    /// A limiter with windows of `interval`, tracking at most `maxKeys` keys.
    init(interval: Duration, maxKeys: Int) {
        self.interval = interval
        self.maxKeys = maxKeys
    }

    /// How many windows are open.
    var openWindows: Int { windows.count }

    /// Takes in a failure of `key` (of `kind`) at `now`; returns the lines to log.
    mutating func record(_ key: Key, kind: String, at now: ContinuousClock.Instant) -> [Line] {
        var lines: [Line] = []
        var key = key
        if windows[key] == nil, windows.count >= maxKeys {
            lines += closeExpired(at: now)
            if windows.count >= maxKeys { key.category = Self.otherCategories }
        }
        if var window = windows[key], now - window.opened < interval {
            window.suppressed += 1
            windows[key] = window
            return lines
        }
        let suppressed = windows[key]?.suppressed ?? 0
        windows[key] = Window(opened: now, suppressed: 0)
        lines.append(.failure(key, kind: kind, suppressed: suppressed))
        return lines
    }

    /// Drops the windows that have ended, returning a line for each that had unlogged failures.
    private mutating func closeExpired(at now: ContinuousClock.Instant) -> [Line] {
        let expired = windows.filter { now - $0.value.opened >= interval }
        for key in expired.keys { windows[key] = nil }
        return expired.filter { $0.value.suppressed > 0 }.map { .suppressedOnly($0.key, count: $0.value.suppressed) }
    }
}
