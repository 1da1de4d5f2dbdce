internal import CRdKafka

extension KeyPartitioner.Algorithm {
    /// The partition librdkafka's partitioner function of this algorithm gives the key in
    /// `bytes` (not empty) among `partitionCount` (`rd_kafka_msg_partitioner_*`, called without
    /// a topic: these functions read only the key and the count).
    func partition(of bytes: UnsafeRawBufferPointer, partitionCount: Int32) -> Int32 {
        switch self {
        case .murmur2, .murmur2Random:
            rd_kafka_msg_partitioner_murmur2(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
        case .consistent, .consistentRandom:
            rd_kafka_msg_partitioner_consistent(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
        case .fnv1a, .fnv1aRandom:
            rd_kafka_msg_partitioner_fnv1a(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
        }
    }
}
