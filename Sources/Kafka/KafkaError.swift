/// A failure reported by librdkafka (or by this module on its behalf), with librdkafka's error code.
///
/// Decisions (retry, give up, dead-letter) read ``code``, ``isFatal`` and ``isRetriable``, never
/// ``message``, which is for people.
public struct KafkaError: Error, Sendable, CustomStringConvertible {
    /// The raw `rd_kafka_resp_err_t` value (negative codes are librdkafka's own, positive ones the broker's).
    public var code: Int32
    /// librdkafka's symbolic name for ``code`` (`rd_kafka_err2name`), such as `_QUEUE_FULL`.
    public var name: String
    /// A human-readable explanation.
    public var message: String
    /// The client instance can no longer be used (for example an idempotent producer lost its state).
    public var isFatal: Bool
    /// Retrying the same operation later may succeed.
    public var isRetriable: Bool
    /// The producer's open transaction cannot commit any more and must be aborted
    /// (`rd_kafka_error_txn_requires_abort`); only transactional calls set it.
    public var requiresAbort: Bool
    /// A record's produce only: librdkafka refused the record when it was handed over
    /// (`rd_kafka_produceva` failed), so it never left the client. Such a refusal has no delivery
    /// report and leaves an open transaction as it was; a delivery report's failure puts it in
    /// the abortable state (librdkafka counts failed reports, and its commit then requires an abort).
    public var isRefusedLocally = false

    /// Creates an error from its parts.
    package init(
        code: Int32, name: String, message: String, isFatal: Bool = false, isRetriable: Bool = false, requiresAbort: Bool = false
    ) {
        self.code = code
        self.name = name
        self.message = message
        self.isFatal = isFatal
        self.isRetriable = isRetriable
        self.requiresAbort = requiresAbort
    }

    /// This error, for a record librdkafka refused when it was handed over (``isRefusedLocally``).
    var refusedLocally: KafkaError {
        var error = self
        error.isRefusedLocally = true
        return error
    }

    /// `name (code): message`.
    public var description: String { "\(name) (\(code)): \(message)" }
}
