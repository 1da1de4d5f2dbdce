import Logging
import Synchronization
internal import CRdKafka

/// What a producer's C callbacks see: besides the logger, the first fatal error and who to tell.
///
/// A fatal error (an idempotent producer that lost its sequence state, say) makes every later
/// produce fail; without this callback it would surface only as one failed delivery report after
/// another.
final class ProducerContext: ClientContext, @unchecked Sendable {
    // @unchecked Sendable: the superclass's state is immutable; ours is in a `Mutex`.

    /// The first fatal error, once one happened.
    let fatalError = Mutex<KafkaError?>(nil)
    /// Told of the first fatal error, on librdkafka's thread (the producer's poll thread).
    let onFatalError: @Sendable (KafkaError) -> Void
    /// The batches awaiting delivery reports, which the delivery-report callback completes.
    let deliveries = PendingDeliveries()

    /// A context that logs to `logger` and reports the first fatal error to `onFatalError`.
    init(logger: Logger, onFatalError: @escaping @Sendable (KafkaError) -> Void) {
        self.onFatalError = onFatalError
        super.init(logger: logger)
    }
}

/// librdkafka's error callback for producers: reads the underlying cause of a fatal error
/// (`rd_kafka_fatal_error`) and reports it once; other errors are logged by librdkafka itself.
private func producerErrorCallback(
    _ handle: OpaquePointer?, _ code: Int32, _ reason: UnsafePointer<CChar>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let handle, code == RD_KAFKA_RESP_ERR__FATAL.rawValue, let raw = rd_kafka_opaque(handle) else { return }
    let context = Unmanaged<ClientContext>.fromOpaque(raw).takeUnretainedValue()
    guard let producer = context as? ProducerContext else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    let cause = rd_kafka_fatal_error(handle, &buffer, buffer.count)
    let error = KafkaError(cause, message: String(cBuffer: buffer), isFatal: true, isRetriable: false)
    let isFirst = producer.fatalError.withLock { stored in
        guard stored == nil else { return false }
        stored = error
        return true
    }
    if isFirst { producer.onFatalError(error) }
}

extension RDKafkaConfig {
    /// Installs the producer's error callback (fatal errors).
    func routeProducerErrors() {
        rd_kafka_conf_set_error_cb(pointer, producerErrorCallback)
    }
}
