#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The topics of the configured apps (each bundle ID, with and without each push type's suffix),
/// so that validating a request for a configured app compares its `apns-topic` bytes with a table
/// instead of decoding them into strings and checking its suffix and bundle ID (check 6).
///
/// Looked up by the header's bytes where they lie: an open-addressing table of the topics'
/// hashes, their bytes in one buffer. Nothing is made per request, and no string is copied: a
/// request decided in place writes its bundle ID from ``withBundleID(at:_:)``.
package struct KnownTopics: Sendable {
    /// A topic's place in the table.
    package typealias Index = Int

    /// A configured topic's strings, for the owned request, which keeps them.
    package struct Entry: Sendable {
        /// The topic as a request gives it.
        package let topic: String
        /// The bundle ID it names.
        package let bundleID: String
    }

    /// Where a topic's bytes are in ``bytes``, and what it is.
    private struct Place: Sendable {
        var start: Int
        var count: Int
        var bundleIDCount: Int
        /// The push type whose suffix the topic ends in; nil for the bundle ID alone.
        var suffixed: PushType?
    }

    /// Every topic's strings, by index.
    private let entries: [Entry]
    /// Every topic's place, by index.
    private let places: [Place]
    /// Every topic's bytes, one after another.
    private let bytes: [UInt8]
    /// The table: a topic's index plus one at its hash's slot (or the next free one); 0 is empty.
    private let slots: [Int]

    init(bundleIDs: Set<String>) {
        var found: [(topic: String, bundleID: String, suffixed: PushType?)] = []
        var counts: [String: Int] = [:]
        for bundleID in bundleIDs.sorted() where !bundleID.isEmpty {
            if RequestValidator.suffixedPushType(of: bundleID) == nil { found.append((bundleID, bundleID, nil)) }
            for (pushType, suffix) in PushType.suffixed { found.append((bundleID + suffix, bundleID, pushType)) }
        }
        for topic in found { counts[topic.topic, default: 0] += 1 }
        // Two readings of one topic: leave it to the general rules.
        found.removeAll { counts[$0.topic, default: 0] > 1 }
        var bytes: [UInt8] = []
        var places: [Place] = []
        for topic in found {
            places.append(Place(start: bytes.count, count: topic.topic.utf8.count, bundleIDCount: topic.bundleID.utf8.count, suffixed: topic.suffixed))
            bytes += topic.topic.utf8
        }
        // At most half full, so a probe ends soon at an empty slot.
        var size = 8
        while size < found.count * 2 { size *= 2 }
        var slots = [Int](repeating: 0, count: size)
        for (index, place) in places.enumerated() {
            var slot = bytes.withUnsafeBytes { Self.hash(UnsafeRawBufferPointer(rebasing: $0[place.start..<place.start + place.count])) } & (size - 1)
            while slots[slot] != 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = index + 1
        }
        self.entries = found.map { Entry(topic: $0.topic, bundleID: $0.bundleID) }
        self.places = places
        self.bytes = bytes
        self.slots = slots
    }

    /// The strings of the topic at `index`.
    package subscript(index: Index) -> Entry { entries[index] }

    /// How many topics there are (indices run from 0 to this).
    package var count: Int { entries.count }

    /// The configured topic whose bytes are `topic` and whose suffix is `pushType`'s; nil otherwise.
    func lookUp(_ topic: UnsafeRawBufferPointer, pushType: PushType) -> Index? {
        let mask = slots.count - 1
        var slot = Self.hash(topic) & mask
        return bytes.withUnsafeBytes { stored -> Index? in
            while true {
                let entry = slots[slot]
                guard entry != 0 else { return nil }
                let place = places[entry - 1]
                if place.count == topic.count,
                    memcmp(stored.baseAddress! + place.start, topic.baseAddress!, topic.count) == 0
                {
                    let suffix: PushType? = pushType.topicSuffix == nil ? nil : pushType
                    return place.suffixed == suffix ? entry - 1 : nil
                }
                slot = (slot + 1) & mask
            }
        }
    }

    /// Calls `body` with the bytes of the bundle ID of the topic at `index`.
    package func withBundleID<Result>(at index: Index, _ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        let place = places[index]
        return bytes.withUnsafeBufferPointer { body(UnsafeBufferPointer(rebasing: $0[place.start..<place.start + place.bundleIDCount])) }
    }

    /// FNV-1a of a topic's bytes: the table is fixed by the configuration, so no input can grow
    /// a probe past the table's size.
    private static func hash(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        return Int(truncatingIfNeeded: hash)
    }
}
