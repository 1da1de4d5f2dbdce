/// The librdkafka this module is linked with, and the oldest one it supports.
package enum KafkaLibrary {
    /// The oldest librdkafka the dispatcher runs on: 2.2.0. Before it, tagged fields longer than
    /// one byte in a broker's ApiVersions answer were skipped wrongly (confluentinc/librdkafka pull
    /// request 4278), so a broker that sends them (Tansu does) can never be reached.
    package static let minimumVersionNumber: Int32 = 0x0202_00FF

    /// The oldest supported version as people write it.
    package static let minimumVersion = "2.2.0"

    /// Throws ``KafkaError`` (code `_NOT_IMPLEMENTED`, with a sentence for people) when the linked
    /// librdkafka is older than ``minimumVersion``.
    package static func checkSupported() throws(KafkaError) {
        try check(versionNumber: versionNumber, version: version)
    }

    /// The check of ``checkSupported()`` on a given version, so it can be tested on any number.
    package static func check(versionNumber: Int32, version: String) throws(KafkaError) {
        guard versionNumber < minimumVersionNumber else { return }
        throw KafkaError.notImplemented(
            """
            librdkafka \(version) is too old: the dispatcher needs librdkafka \(minimumVersion) or later \
            (older ones cannot read the ApiVersions answer of some brokers). Build it with \
            scripts/install-librdkafka, then rebuild the dispatcher.
            """
        )
    }
}
