/// What a ``KafkaTopicReader`` reports, in order.
package enum TopicReaderEvent: Sendable {
    /// Messages from one poll cycle.
    case messages([KafkaMessage])
    /// Every partition has been read up to its end at least once (reported once); reading continues.
    case caughtUp
    /// An error librdkafka reported (usually transient).
    case error(KafkaError)
}
