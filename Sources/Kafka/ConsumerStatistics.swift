import Foundation

/// The parts of librdkafka's statistics JSON a consumer cares about, plus the JSON itself.
public struct ConsumerStatistics: Sendable {
    /// Messages behind the high watermark, per assigned partition whose lag is known.
    public var consumerLag: [TopicPartition: Int64]
    /// The statistics JSON as librdkafka emitted it.
    public var raw: String

    /// Creates statistics from their parts.
    public init(consumerLag: [TopicPartition: Int64], raw: String) {
        self.consumerLag = consumerLag
        self.raw = raw
    }

    /// Parses librdkafka's statistics JSON; unknown lags (-1) and unassigned partitions are left out.
    ///
    /// Malformed JSON gives empty lags (with `raw` kept): statistics never fail the consumer.
    public init(json: String) {
        var lag: [TopicPartition: Int64] = [:]
        if let document = try? JSONDecoder().decode(Document.self, from: Data(json.utf8)) {
            for (topic, topicStatistics) in document.topics ?? [:] {
                for partition in (topicStatistics.partitions ?? [:]).values
                where partition.partition >= 0 && partition.desired != false {
                    guard let consumerLag = partition.consumerLag, consumerLag >= 0 else { continue }
                    lag[TopicPartition(topic: topic, partition: partition.partition)] = consumerLag
                }
            }
        }
        self.init(consumerLag: lag, raw: json)
    }

    /// The top level of the statistics JSON.
    private struct Document: Decodable {
        var topics: [String: Topic]?
    }

    /// One topic of the statistics JSON.
    private struct Topic: Decodable {
        var partitions: [String: Partition]?
    }

    /// One partition of the statistics JSON (`-1` is librdkafka's internal unassigned partition).
    private struct Partition: Decodable {
        var partition: Int32
        var desired: Bool?
        var consumerLag: Int64?

        enum CodingKeys: String, CodingKey {
            case partition
            case desired
            case consumerLag = "consumer_lag"
        }
    }
}
