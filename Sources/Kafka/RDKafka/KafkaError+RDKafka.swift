internal import CRdKafka

extension KafkaError {
    /// Codes that say "try again later": transient broker or network conditions and local back-pressure.
    private static let retriableErrors: [rd_kafka_resp_err_t] = [
        RD_KAFKA_RESP_ERR__TRANSPORT, RD_KAFKA_RESP_ERR__TIMED_OUT, RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR__QUEUE_FULL, RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, RD_KAFKA_RESP_ERR__WAIT_COORD,
        RD_KAFKA_RESP_ERR__PURGE_QUEUE, RD_KAFKA_RESP_ERR__PURGE_INFLIGHT,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION,
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE, RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
        RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
        RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS, RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR,
    ]

    /// ``retriableErrors`` as raw codes, for lookup.
    private static let retriableCodes = Set(retriableErrors.map(\.rawValue))

    /// An error for a librdkafka response code; `message` defaults to `rd_kafka_err2str`.
    init(_ error: rd_kafka_resp_err_t, message: String? = nil, isFatal: Bool? = nil, isRetriable: Bool? = nil) {
        self.init(
            code: error.rawValue,
            name: String(cString: rd_kafka_err2name(error)),
            message: message ?? String(cString: rd_kafka_err2str(error)),
            isFatal: isFatal ?? (error == RD_KAFKA_RESP_ERR__FATAL),
            isRetriable: isRetriable ?? Self.retriableCodes.contains(error.rawValue)
        )
    }

    /// Reads an `rd_kafka_error_t` and destroys it (the caller owned it): its code, message and
    /// librdkafka's own classification (fatal, retriable, requires the transaction's abort).
    init(consuming error: OpaquePointer) {
        self.init(
            rd_kafka_error_code(error),
            message: String(cString: rd_kafka_error_string(error)),
            isFatal: rd_kafka_error_is_fatal(error) != 0,
            isRetriable: rd_kafka_error_is_retriable(error) != 0 || Self.retriableCodes.contains(rd_kafka_error_code(error).rawValue)
        )
        requiresAbort = rd_kafka_error_txn_requires_abort(error) != 0
        rd_kafka_error_destroy(error)
    }

    /// Whether this says another producer with the same `transactional.id` took over (`_FENCED`,
    /// or the broker's `PRODUCER_FENCED` / `INVALID_PRODUCER_EPOCH`).
    public var isFenced: Bool {
        code == RD_KAFKA_RESP_ERR__FENCED.rawValue || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED.rawValue
            || code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH.rawValue
    }

    /// Whether a transactional call was refused because another one is still in progress
    /// (`_CONFLICT`): an abort asked for while the commit's offsets are being sent, say. It may be
    /// made again once that call returns.
    public var isConflictingCall: Bool { code == RD_KAFKA_RESP_ERR__CONFLICT.rawValue }

    /// A configuration value librdkafka rejected (or a value this module cannot express).
    static func invalidConfiguration(_ message: String) -> KafkaError {
        KafkaError(RD_KAFKA_RESP_ERR__INVALID_ARG, message: message)
    }

    /// The client was shut down before (or while) the operation ran.
    static func shutDown(_ what: String) -> KafkaError {
        KafkaError(RD_KAFKA_RESP_ERR__DESTROY, message: "\(what): the client is shut down", isRetriable: false)
    }

    /// A topic or partition the cluster does not know (`UNKNOWN_TOPIC_OR_PART`, retriable: it may
    /// be created meanwhile).
    static func unknownTopic(_ message: String) -> KafkaError {
        KafkaError(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, message: message)
    }

    /// Whether this is ``unknownTopic(_:)``'s code.
    var isUnknownTopic: Bool { code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART.rawValue }

    /// An operation that did not finish in its time (`_TIMED_OUT`).
    static func timedOut(_ message: String) -> KafkaError {
        KafkaError(RD_KAFKA_RESP_ERR__TIMED_OUT, message: message)
    }

    /// Something the linked librdkafka cannot do (`_NOT_IMPLEMENTED`).
    static func notImplemented(_ message: String) -> KafkaError {
        KafkaError(RD_KAFKA_RESP_ERR__NOT_IMPLEMENTED, message: message)
    }

    /// Codes that no retry of the same record can cure: it is too large, invalid, or its topic is
    /// unknown or closed to this client.
    private static let permanentProduceCodes: Set<Int32> = Set(
        [
            RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE,
            RD_KAFKA_RESP_ERR_INVALID_RECORD, RD_KAFKA_RESP_ERR_INVALID_MSG,
            RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED,
            RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
            RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION,
            RD_KAFKA_RESP_ERR_POLICY_VIOLATION, RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT,
            RD_KAFKA_RESP_ERR__INVALID_ARG,
        ].map(\.rawValue))

    /// Whether this is librdkafka's local "producer queue is full" back-pressure signal.
    var isLocalQueueFull: Bool { code == RD_KAFKA_RESP_ERR__QUEUE_FULL.rawValue }
}

extension KafkaError {
    /// What a failed produce of one record calls for.
    public enum ProduceFailure: Sendable, Hashable {
        /// Try the same record again later: the cluster or the connection failed, not the record.
        case retriable
        /// No retry can succeed: the record is too large or invalid, or its topic is unknown or
        /// not authorised.
        case permanent
        /// The producer cannot be used any more: only a new producer recovers.
        case fatal
        /// The producer was shut down: the record was not written and will not be.
        case shutDown
    }

    /// What this error, from a delivery report or a refused produce, calls for. Codes not known
    /// to be permanent count as retriable: the caller bounds its retries in time.
    public var produceFailure: ProduceFailure {
        if isFatal { return .fatal }
        if code == RD_KAFKA_RESP_ERR__DESTROY.rawValue { return .shutDown }
        if Self.permanentProduceCodes.contains(code) { return .permanent }
        return .retriable
    }

    /// Whether the brokers (or librdkafka) refused the record for its size.
    public var isRecordTooLarge: Bool {
        code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE.rawValue || code == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE.rawValue
    }
}
