internal import CRdKafka

/// A producer handle's own calls, besides producing (`+Produce`) and transactions (`+Transactions`).
extension RDKafkaClient {
    /// Waits until every record enqueued so far has its delivery report, serving the reports,
    /// for up to `milliseconds` (`rd_kafka_flush`; blocks: never on the cooperative pool).
    /// - Returns: nil when all were reported, else the error (`_TIMED_OUT`).
    func flush(milliseconds: Int32) -> KafkaError? {
        let error = rd_kafka_flush(handle, milliseconds)
        return error == RD_KAFKA_RESP_ERR_NO_ERROR ? nil : KafkaError(error)
    }

    /// Fails every record still queued or in flight as purged (`rd_kafka_purge`): their delivery
    /// reports come, with an error, at the next polls.
    func purgeQueued() {
        rd_kafka_purge(handle, Int32(RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT))
    }

    /// Records enqueued but not yet reported, plus reports not yet served (`rd_kafka_outq_len`).
    var queueLength: Int {
        Int(rd_kafka_outq_len(handle))
    }

    /// Raises a fatal error in librdkafka as a broker would (`rd_kafka_test_fatal_error`), for
    /// tests. Requires idempotence.
    func raiseFatalErrorForTesting(reason: String) {
        _ = rd_kafka_test_fatal_error(handle, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER, reason)
    }
}
