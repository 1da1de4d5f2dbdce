import Records

/// The topics of the configured apps, made once per validator: a request's `apns-topic` is looked up
/// by its bytes, and a known one shares these strings instead of decoding two new ones (the topic
/// and its bundle ID) for every request.
///
/// A hit is only a shortcut: it answers exactly what the general rules (`bundleID(topic:pushType:)`,
/// then the allowed bundle IDs) answer for the same topic and push type, and anything else (an
/// unknown topic, a suffix that does not match the push type) takes the general path, which words
/// the rejection.
struct KnownTopics: Sendable {
    /// What a known topic stands for.
    struct Entry: Sendable {
        /// The topic, as the request's `topic` keeps it.
        let topic: String
        /// The configured bundle ID it names.
        let bundleID: String
        /// The push-type suffix it ends in; nil for the bundle ID alone.
        let suffix: String?
    }

    /// The entries by the topic's bytes.
    private let entries: [RecordBytes: Entry]

    /// Each bundle ID alone (unless it itself ends in a push type's suffix, which the general rules
    /// refuse for the push types without one) and followed by each push type's suffix.
    init(bundleIDs: Set<String>) {
        var entries: [RecordBytes: Entry] = [:]
        var ambiguous: Set<RecordBytes> = []
        func add(_ entry: Entry) {
            let key = RecordBytes(entry.topic)
            if entries.updateValue(entry, forKey: key) != nil { ambiguous.insert(key) }
        }
        for bundleID in bundleIDs where !bundleID.isEmpty {
            if RequestValidator.suffixedPushType(of: bundleID) == nil {
                add(Entry(topic: bundleID, bundleID: bundleID, suffix: nil))
            }
            for (_, suffix) in PushType.suffixed {
                add(Entry(topic: bundleID + suffix, bundleID: bundleID, suffix: suffix))
            }
        }
        // Two readings of one topic: leave it to the general rules.
        for key in ambiguous { entries[key] = nil }
        self.entries = entries
    }

    /// The topic and bundle ID of `topic` when it is a configured app's topic for `pushType`.
    func lookUp(_ topic: RecordBytes, pushType: PushType) -> Entry? {
        guard let entry = entries[topic], entry.suffix == pushType.topicSuffix else { return nil }
        return entry
    }
}
