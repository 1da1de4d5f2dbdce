import Kafka

/// Which partitioner the keyed records of the requests topic follow, learnt from a sample of them:
/// for each placement the worker can reproduce (murmur2, CRC32, FNV-1a), how many sampled keys it
/// puts in the partition they were read from (docs/worker.md, "Partitioned state").
///
/// The placement the producers use puts each of their keys where it was read; any other does so
/// by chance, about once in the partition count. So a few dozen keys tell them apart, and the
/// sample stops there: records read afterwards are not hashed at all.
struct PartitionerSample: Sendable {
    /// What a whole sample found.
    enum Finding: Sendable, Equatable {
        /// Every sampled key is where this placement (one of ``KeyPartitioner/Algorithm/placements``) puts it.
        case follows(KeyPartitioner.Algorithm)
        /// No one placement puts every sampled key where it was read: the producers use several
        /// partitioners, one the worker cannot reproduce (`random`, a custom one), or choose
        /// partitions themselves.
        case noneOfThem
    }

    /// Keys sampled before the finding is settled: a wrong placement passes them all by chance
    /// once in 2³² on a topic of two partitions, less with more.
    static let size = 32

    /// The worker's own placement.
    let configured: KeyPartitioner.Algorithm
    /// Keys sampled so far.
    private(set) var sampled = 0
    /// The partitioner of each placement, for the topic's partition count.
    private let partitioners: [KeyPartitioner]
    /// Per placement, in `partitioners`' order, the sampled keys it puts where they were read.
    private var placed: [Int]

    /// An empty sample of a topic whose keys the worker places with `keys`.
    init(keys: KeyPartitioner) {
        configured = keys.algorithm.placement
        partitioners = KeyPartitioner.Algorithm.placements.map { keys.with($0) }
        placed = Array(repeating: 0, count: partitioners.count)
    }

    /// Whether the sample is whole: ``finding`` is settled and keys are no longer added.
    var isSettled: Bool { sampled >= Self.size }

    /// Adds a key read from `partition`; an empty key (placed at random) is left out.
    mutating func add(key: UnsafeRawBufferPointer, partition: Int32) {
        guard !isSettled, !key.isEmpty else { return }
        sampled += 1
        for index in partitioners.indices where partitioners[index].partition(of: key) == partition {
            placed[index] += 1
        }
    }

    /// What the sample found; nil until it is whole. Where several placements put every key
    /// where it was read (a topic of one partition), the worker's own is the answer.
    var finding: Finding? {
        guard isSettled else { return nil }
        let following = partitioners.indices.filter { placed[$0] == sampled }.map { partitioners[$0].algorithm }
        if following.contains(configured) { return .follows(configured) }
        return following.first.map(Finding.follows) ?? .noneOfThem
    }

    /// How many sampled keys each placement puts where they were read, for people:
    /// `murmur2_random 11, consistent_random 32, fnv1a_random 9 of 32`.
    var tally: String {
        zip(partitioners, placed).map { "\($0.algorithm.rawValue) \($1)" }.joined(separator: ", ") + " of \(sampled)"
    }
}

extension StateGauges.RequestsPartitioner {
    /// What `finding` says beside the worker's own placement.
    init(_ finding: PartitionerSample.Finding, configured: KeyPartitioner.Algorithm) {
        switch finding {
        case .follows(let placement): self.init(found: placement.rawValue, configured: configured.rawValue)
        case .noneOfThem: self.init(found: Self.noneFound, configured: configured.rawValue)
        }
    }
}
