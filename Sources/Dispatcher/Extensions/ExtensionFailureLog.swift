public import Logging
import Synchronization

/// Where service extension failures are seen: a warning per failure, at most one per app,
/// category and step in each interval, carrying the app, category, step and the error's kind, and
/// how many failures of the same key were left out since the last line.
///
/// Never the payload, the error's description or a URL: a description may quote either, and a
/// signed media URL is a secret. A failed extension is not a dead letter (the original is
/// delivered), so without this line it would show only as `extension-failed` in a delivery.
public final class ExtensionFailureLog: Sendable {
    /// The default length of a window: a minute.
    public static let defaultInterval: Duration = .seconds(60)
    /// The most app, category and step windows kept at once.
    package static let maxKeys = 1_000
    /// The longest category written (categories come from payloads).
    static let maxCategoryLength = 64

    private let logger: Logger
    private let now: @Sendable () -> ContinuousClock.Instant
    private let limiter: Mutex<ExtensionFailureLimiter>

    /// A log writing to `logger`, one line per key and `interval`; `now` is the clock (tests
    /// pass their own).
    public init(
        logger: Logger,
        interval: Duration = defaultInterval,
        now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }
    ) {
        self.logger = logger
        self.now = now
        self.limiter = Mutex(ExtensionFailureLimiter(interval: interval, maxKeys: Self.maxKeys))
    }

    /// Records that step `step` failed with `error` for a request of `app` with `category`.
    package func record(app: String, category: String?, step: String, error: any Error) {
        record(app: app, category: category, step: step, kind: Self.kind(of: error))
    }

    /// Records that step `step` failed for a reason of `kind`.
    func record(app: String, category: String?, step: String, kind: String) {
        let key = ExtensionFailureLimiter.Key(app: app, category: category.map { String($0.prefix(Self.maxCategoryLength)) }, step: step)
        let instant = now()
        // Decided under the lock, written outside it: a log handler may block.
        let lines = limiter.withLock { $0.record(key, kind: kind, at: instant) }
        for line in lines { write(line) }
    }

    /// The kind of `error` for a log line: its own ``ServiceExtensionError/kind`` when it names
    /// one, else its type's name (which carries no input either).
    static func kind(of error: any Error) -> String {
        (error as? any ServiceExtensionError)?.kind ?? String(describing: type(of: error))
    }

    private func write(_ line: ExtensionFailureLimiter.Line) {
        switch line {
        case .failure(let key, let kind, let suppressed):
            var metadata = Self.metadata(key)
            metadata[ExtensionLogKey.error] = .string(kind)
            if suppressed > 0 { metadata[ExtensionLogKey.suppressed] = .stringConvertible(suppressed) }
            // A stop for memory (section 22) is the system killing the extension, not the extension failing.
            let message: Logger.Message =
                kind == ExtensionMemoryLimitExceeded.kindName
                ? "service extension stopped: its memory passed extensionMemoryLimit; the original is delivered"
                : "service extension failed; the original is delivered"
            logger.warning(message, metadata: metadata)
        case .suppressedOnly(let key, let count):
            var metadata = Self.metadata(key)
            metadata[ExtensionLogKey.suppressed] = .stringConvertible(count)
            logger.warning("service extension failures not logged in the last interval", metadata: metadata)
        }
    }

    private static func metadata(_ key: ExtensionFailureLimiter.Key) -> Logger.Metadata {
        [
            ExtensionLogKey.app: .string(key.app),
            ExtensionLogKey.category: .string(key.category ?? "(none)"),
            ExtensionLogKey.step: .string(key.step),
        ]
    }
}

/// The metadata keys of the extension log lines (named like the worker's `LogKey`).
enum ExtensionLogKey {
    static let app = "apns.bundle_id"
    static let category = "apns.category"
    static let step = "extension.step"
    static let error = "extension.error"
    static let suppressed = "extension.suppressed"
}
