import Foundation
public import Records

/// The parts of librdkafka's statistics JSON a consumer cares about, plus the JSON itself.
public struct ConsumerStatistics: Sendable {
    /// Messages not yet read, per assigned partition: end offset minus the consumer's position
    /// (minus the committed offset before anything was read). Partitions with neither are left out.
    public var consumerLag: [TopicPartition: Int64]
    /// Messages not yet committed, per assigned partition with a committed offset (librdkafka's `consumer_lag`).
    public var committedLag: [TopicPartition: Int64]
    /// The statistics JSON as librdkafka emitted it.
    public var raw: String

    /// Creates statistics from their parts.
    package init(consumerLag: [TopicPartition: Int64], committedLag: [TopicPartition: Int64] = [:], raw: String) {
        self.consumerLag = consumerLag
        self.committedLag = committedLag
        self.raw = raw
    }

    /// Parses librdkafka's statistics JSON; unknown values and unassigned partitions are left out.
    ///
    /// The end offset is the last stable offset when known (`isolation.level=read_committed`, the
    /// default), else the high watermark. Malformed JSON gives empty lags (with `raw` kept):
    /// statistics never fail the consumer.
    package init(json: String) {
        var lag: [TopicPartition: Int64] = [:]
        var committedLag: [TopicPartition: Int64] = [:]
        if let document = try? JSONDecoder().decode(Document.self, from: Data(json.utf8)) {
            for (topic, topicStatistics) in document.topics ?? [:] {
                for partition in (topicStatistics.partitions ?? [:]).values
                where partition.partition >= 0 && partition.desired != false {
                    let key = TopicPartition(topic: topic, partition: partition.partition)
                    if let committed = partition.consumerLag, committed >= 0 { committedLag[key] = committed }
                    guard let end = [partition.lastStableOffset, partition.highWatermark].compactMap({ $0 }).first(where: { $0 >= 0 }),
                        let position = [partition.applicationOffset, partition.committedOffset].compactMap({ $0 }).first(where: { $0 >= 0 })
                    else { continue }
                    lag[key] = max(0, end - position)
                }
            }
        }
        self.init(consumerLag: lag, committedLag: committedLag, raw: json)
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
        var applicationOffset: Int64?
        var committedOffset: Int64?
        var highWatermark: Int64?
        var lastStableOffset: Int64?

        /// librdkafka's JSON names.
        enum CodingKeys: String, CodingKey {
            case partition
            case desired
            case consumerLag = "consumer_lag"
            case applicationOffset = "app_offset"
            case committedOffset = "committed_offset"
            case highWatermark = "hi_offset"
            case lastStableOffset = "ls_offset"
        }
    }
}
