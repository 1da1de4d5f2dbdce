/// The partition a key goes to, as librdkafka's producer picks it: what a worker needs to know
/// whether it owns the state of a key it did not read from its own partition (a Live Activity's
/// token in a broadcast's fan-out).
package struct KeyPartitioner: Sendable {
    /// The partitioner functions this type can reproduce (the producer's `partitioner` property).
    package enum Algorithm: String, Sendable, CaseIterable {
        /// Java's default: murmur2 of the key (a null key: random).
        case murmur2, murmur2Random = "murmur2_random"
        /// CRC32 of the key (librdkafka's default; a null key: random for `consistent_random`).
        case consistent, consistentRandom = "consistent_random"
        /// FNV-1a of the key.
        case fnv1a, fnv1aRandom = "fnv1a_random"
    }

    /// The algorithm.
    package let algorithm: Algorithm
    /// The topic's partition count.
    package let partitionCount: Int32

    /// A partitioner for a topic of `partitionCount` partitions; nil when `name` is not one of
    /// ``Algorithm`` (a `random` partitioner places keys nowhere in particular).
    package init?(name: String, partitionCount: Int32) {
        guard let algorithm = Algorithm(rawValue: name), partitionCount > 0 else { return nil }
        self.algorithm = algorithm
        self.partitionCount = partitionCount
    }

    /// A partitioner of `algorithm` for a topic of `partitionCount` partitions (more than 0).
    package init(_ algorithm: Algorithm, partitionCount: Int32) {
        precondition(partitionCount > 0, "a topic has at least one partition")
        self.algorithm = algorithm
        self.partitionCount = partitionCount
    }

    /// The partition of `key` (not empty).
    package func partition(of key: [UInt8]) -> Int32 {
        key.withUnsafeBytes { partition(of: $0) }
    }

    /// The partition of the key in `bytes` (not empty), read where it lies: librdkafka's own
    /// partitioner function (`KeyPartitioner+RDKafka.swift`), so that it cannot differ.
    package func partition(of bytes: UnsafeRawBufferPointer) -> Int32 {
        algorithm.partition(of: bytes, partitionCount: partitionCount)
    }

    /// This topic's partitioner of the same partition count under `algorithm`.
    package func with(_ algorithm: Algorithm) -> KeyPartitioner {
        KeyPartitioner(algorithm, partitionCount: partitionCount)
    }
}

extension KeyPartitioner.Algorithm {
    /// One algorithm per way of placing a key, each under the name a producer is usually given:
    /// the plain and `_random` variants of a hash place every key alike (they differ only for a
    /// record without a key).
    package static let placements: [Self] = [.murmur2Random, .consistentRandom, .fnv1aRandom]

    /// This algorithm's member of ``placements``: the one that places keys as it does.
    package var placement: Self {
        switch self {
        case .murmur2, .murmur2Random: .murmur2Random
        case .consistent, .consistentRandom: .consistentRandom
        case .fnv1a, .fnv1aRandom: .fnv1aRandom
        }
    }
}
