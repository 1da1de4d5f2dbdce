internal import CRdKafka

extension KafkaLibrary {
    /// librdkafka's version as it prints it (`rd_kafka_version_str`), such as `2.8.0`.
    package static var version: String { String(cString: rd_kafka_version_str()) }

    /// librdkafka's version as a number, `0xMMmmrrxx` (major, minor, revision, pre-release).
    package static var versionNumber: Int32 { rd_kafka_version() }
}
