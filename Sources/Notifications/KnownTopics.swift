import Records

/// The topics of the configured apps (each bundle ID, with and without each push type's suffix),
/// so that validating a request for a configured app compares its `apns-topic` bytes with a table
/// instead of decoding them into strings and checking its suffix and bundle ID (check 6).
///
/// Looked up by the header's bytes where they lie: a table of hashes (a request's topic is hashed
/// once, its bytes compared with the one or two entries of that hash), so no key is made per
/// request.
package struct KnownTopics: Sendable {
    /// A topic's place in the table.
    package typealias Index = Int

    /// A configured topic: the topic, its bundle ID, and the suffix that makes one from the other.
    package struct Entry: Sendable {
        /// The topic as a request gives it.
        package let topic: String
        /// The bundle ID it names.
        package let bundleID: String
        /// The push-type suffix it ends with, nil for the bundle ID alone.
        let suffix: String?
        /// The topic's bytes, compared with a request's.
        let bytes: [UInt8]
    }

    /// Every topic, in a fixed order (``Index``).
    private let entries: [Entry]
    /// The entries of each hash of a topic's bytes.
    private let byHash: [Int: [Index]]

    init(bundleIDs: Set<String>) {
        var entries: [Entry] = []
        var positions: [String: Int] = [:]
        var ambiguous: Set<String> = []
        func add(_ topic: String, bundleID: String, suffix: String?) {
            if positions[topic] != nil {
                ambiguous.insert(topic)
                return
            }
            positions[topic] = entries.count
            entries.append(Entry(topic: topic, bundleID: bundleID, suffix: suffix, bytes: Array(topic.utf8)))
        }
        for bundleID in bundleIDs.sorted() where !bundleID.isEmpty {
            if RequestValidator.suffixedPushType(of: bundleID) == nil {
                add(bundleID, bundleID: bundleID, suffix: nil)
            }
            for (_, suffix) in PushType.suffixed {
                add(bundleID + suffix, bundleID: bundleID, suffix: suffix)
            }
        }
        // Two readings of one topic: leave it to the general rules.
        entries.removeAll { ambiguous.contains($0.topic) }
        self.entries = entries
        var byHash: [Int: [Index]] = [:]
        for (index, entry) in entries.enumerated() {
            byHash[entry.bytes.withUnsafeBytes(Self.hash), default: []].append(index)
        }
        self.byHash = byHash
    }

    /// The entry at `index`.
    package subscript(index: Index) -> Entry { entries[index] }

    /// How many topics there are (indices run from 0 to this).
    package var count: Int { entries.count }

    /// The configured topic whose bytes are `topic` and whose suffix is `pushType`'s; nil otherwise.
    func lookUp(_ topic: UnsafeRawBufferPointer, pushType: PushType) -> Index? {
        guard let candidates = byHash[Self.hash(topic)] else { return nil }
        for index in candidates {
            let entry = entries[index]
            guard entry.bytes.count == topic.count,
                entry.bytes.withUnsafeBytes({ $0.elementsEqual(topic) }),
                entry.suffix == pushType.topicSuffix
            else { continue }
            return index
        }
        return nil
    }

    /// The hash of a topic's bytes.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return hasher.finalize()
    }
}
