import Logging
internal import CRdKafka

/// What librdkafka's C callbacks of one client see through the handle's opaque pointer.
///
/// The owning ``RDKafkaClient`` retains it before `rd_kafka_new` and releases it only after
/// `rd_kafka_destroy` has returned, so every callback finds it alive. Subclasses add the state of
/// their client kind (delivery waiters, consumer events).
class ClientContext: @unchecked Sendable {
    // @unchecked Sendable: the only stored state here is an immutable Sendable `Logger`;
    // subclasses keep their mutable state in `Mutex`es.

    /// Where librdkafka's own log lines go.
    let logger: Logger

    /// Creates a context that logs to `logger`.
    init(logger: Logger) {
        self.logger = logger
    }
}

/// Routes one librdkafka log line (syslog levels) to the client's `Logger`.
///
/// Called on librdkafka's internal threads; logging through swift-log is thread-safe.
private func logCallback(
    _ handle: OpaquePointer?, _ level: Int32, _ facility: UnsafePointer<CChar>?, _ line: UnsafePointer<CChar>?
) {
    guard let handle, let opaque = rd_kafka_opaque(handle), let line else { return }
    let context = Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue()
    let swiftLevel: Logger.Level =
        switch level {
        case ...2: .critical
        case 3: .error
        case 4: .warning
        case 5: .notice
        case 6: .info
        default: .debug
        }
    var metadata: Logger.Metadata = [:]
    if let facility { metadata[KafkaLogKey.facility] = .string(String(cString: facility)) }
    context.logger.log(level: swiftLevel, "\(String(cString: line))", metadata: metadata)
}

extension RDKafkaConfig {
    /// Installs the log bridge: librdkafka's log lines go to the context's logger.
    func routeLogs() {
        rd_kafka_conf_set_log_cb(pointer, logCallback)
    }
}
