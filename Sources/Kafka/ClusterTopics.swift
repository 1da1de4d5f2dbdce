/// The topics a cluster lets a client see, with their partition counts, as one metadata request
/// for all topics answered (``KafkaProducer/clusterTopics(timeout:)``): what a worker checks at
/// start, its output topics and its state topics alike, from one answer.
public struct ClusterTopics: Sendable, Hashable {
    /// The partition count of each topic the client may see.
    public let partitionCounts: [String: Int32]

    /// The topics of `partitionCounts`.
    package init(partitionCounts: [String: Int32]) {
        self.partitionCounts = partitionCounts
    }

    /// Checks that each of `topics` exists and the client may see it.
    /// - Throws: ``KafkaError`` `UNKNOWN_TOPIC_OR_PART` naming the topics the cluster does not
    ///   know or does not let the client see.
    public func requireKnown(_ topics: [String]) throws(KafkaError) {
        let missing = topics.filter { partitionCounts[$0] == nil }
        guard missing.isEmpty else {
            throw KafkaError.unknownTopic(
                "the cluster does not know these topics, or does not let this client see them: " + missing.joined(separator: ", "))
        }
    }
}
