import Kafka
import Records

/// The state records one restore read from a partition their key does not belong to under the
/// worker's partitioner (docs/worker.md, "Partitioned state"), by table and partition, with the
/// other placements that would have put them there: what the warning names as their likely writer.
struct MisplacedRecords: Sendable {
    /// A table restored by partition: the `table` label of `state_misplaced_records_total`.
    enum Table: String, Sendable, CaseIterable {
        case activities, stored, devices, badges
    }

    /// Where misplaced records were read.
    struct Place: Sendable, Hashable {
        var table: Table
        var partition: TopicPartition
    }

    /// What was found in one place.
    struct Found: Sendable {
        /// Misplaced records read there.
        var count = 0
        /// The other placements that put every one of them where it was read.
        var alternatives: [KeyPartitioner.Algorithm]
    }

    /// The worker's partitioner.
    let keys: KeyPartitioner
    /// The other placements, for the partition count of `keys`.
    private let others: [KeyPartitioner]
    /// What was found, by place.
    private(set) var found: [Place: Found] = [:]

    /// Nothing found yet, under `keys`.
    init(keys: KeyPartitioner) {
        self.keys = keys
        others = KeyPartitioner.Algorithm.placements.filter { $0 != keys.algorithm.placement }.map { keys.with($0) }
    }

    /// Checks one restored record of `table`: counted when no form of its key goes to the
    /// partition it was read from. A record without the key its table needs is not counted (the
    /// table logs it as malformed).
    mutating func check(_ message: KafkaMessage, of table: Table) {
        guard let forms = Self.keyForms(of: message.key, in: table) else { return }
        func places(_ partitioner: KeyPartitioner) -> Bool {
            forms.contains { partitioner.partition(of: $0) == message.partition }
        }
        guard !places(keys) else { return }
        let place = Place(table: table, partition: TopicPartition(topic: message.topic, partition: message.partition))
        var entry = found[place] ?? Found(alternatives: others.map(\.algorithm))
        let candidates = entry.alternatives
        entry.count += 1
        entry.alternatives = others.filter { candidates.contains($0.algorithm) && places($0) }.map(\.algorithm)
        found[place] = entry
    }

    /// Misplaced records, by table.
    var counts: [Table: Int] {
        found.reduce(into: [:]) { $0[$1.key.table, default: 0] += $1.value.count }
    }

    /// The forms of `key` its partition may have been chosen by: the key itself for an activity
    /// or a device; for a stored notification or a badge count (`<device token>/<bundle ID>`, its
    /// token in lower case) its device's token as the request that wrote it may have been keyed,
    /// in lower or upper case. Nil without a key to place.
    static func keyForms(of key: RecordBytes?, in table: Table) -> [[UInt8]]? {
        guard let key, !key.isEmpty else { return nil }
        switch table {
        case .activities, .devices:
            return [key.array]
        case .stored, .badges:
            guard let slash = key.firstIndex(of: UInt8(ascii: "/")), slash > 0 else { return nil }
            let token = Array(key[..<slash])
            let upper = token.map { (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) ? $0 - 32 : $0 }
            return upper == token ? [token] : [token, upper]
        }
    }
}

extension MisplacedRecords {
    /// The warning for what was found in `place`: what is wrong, who likely wrote it, and the fix.
    func warning(for place: Place, _ found: Found) -> String {
        let configured = keys.algorithm.rawValue
        let byToken = place.table == .stored || place.table == .badges
        let whose = byToken ? "device tokens" : "keys"
        let writer = Self.likelyWriter(found.alternatives)
        let written = byToken ? "the requests that wrote them \(writer)" : writer
        return "\(place.partition.topic) partition \(place.partition.partition) holds \(found.count) record(s) whose \(whose) \(configured) puts in other partitions (\(written)): "
            + "write them with partitioner \(configured), or set kafka.properties.partitioner to the one your providers use"
    }

    /// Who likely placed keys where `placements` put them, as a question: `written with
    /// consistent_random, librdkafka's default?`.
    static func likelyWriter(_ placements: [KeyPartitioner.Algorithm]) -> String {
        guard !placements.isEmpty else { return "written with several partitioners, or to chosen partitions?" }
        return "written with " + placements.map { $0.rawValue + ($0.usualWriters.map { ", \($0)" } ?? "") }.joined(separator: " or ") + "?"
    }
}

extension KeyPartitioner.Algorithm {
    /// Which clients place keys this way by default, for people; nil when none does.
    var usualWriters: String? {
        switch placement {
        case .murmur2Random: "the Java client's default"
        case .consistentRandom: "librdkafka's default"
        default: nil
        }
    }
}
