internal import CRdKafka
import Synchronization

/// A producer's C callbacks: delivery reports, which complete the slots of ``PendingDeliveries``,
/// and fatal errors, which ``ProducerContext`` keeps and reports once.

extension RDKafkaConfig {
    /// Installs the delivery-report callback that resumes each `send`.
    func routeDeliveryReports() {
        rd_kafka_conf_set_dr_msg_cb(pointer, deliveryReportCallback)
    }

    /// Installs the producer's error callback (fatal errors).
    func routeProducerErrors() {
        rd_kafka_conf_set_error_cb(pointer, producerErrorCallback)
    }
}

/// Completes the record's slot in the batch its delivery id names: exactly once, because
/// librdkafka reports each accepted message exactly once (purged ones included), and `send`
/// completes a slot by itself only when the record was not accepted.
///
/// Runs on whichever thread serves the producer queue (`rd_kafka_poll`/`rd_kafka_flush`): the
/// producer's poll thread, or a thread committing a transaction (which flushes).
private func deliveryReportCallback(
    _ handle: OpaquePointer?, _ message: UnsafePointer<rd_kafka_message_t>?, _ opaque: UnsafeMutableRawPointer?
) {
    guard let message, let raw = message.pointee._private, let opaque else { return }
    let report = message.pointee
    let outcome: DeliveryOutcome =
        report.err == RD_KAFKA_RESP_ERR_NO_ERROR
        ? .delivered(partition: report.partition, offset: report.offset)
        // Not `rd_kafka_message_errstr`: for a delivery report it returns the record's own value
        // (the payload) as the message, which is no C string; reading it as one ran past its end
        // (AddressSanitizer: heap-buffer-overflow) and would have put the payload in logs.
        : .failed(KafkaError(report.err, message: String(cString: rd_kafka_err2str(report.err))))
    // Only producers route delivery reports here, and a producer's context is a ProducerContext.
    let context = unsafeDowncast(Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue(), to: ProducerContext.self)
    context.deliveries.complete(DeliveryID(messageOpaque: raw), outcome)
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
