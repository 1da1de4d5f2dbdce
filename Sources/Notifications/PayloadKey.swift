import JSON
import Records

/// The documented keys of an APNs payload (`aps`, its keys, the alert's and the sound's), recognised
/// from raw bytes.
///
/// Two uses, both for speed: the parser hands out these constant strings instead of building a new
/// `String` for every key of every payload, and the `aps` rules dispatch on this enum instead of a chain
/// of `String` comparisons (each unequal comparison of two strings takes the slow, Unicode-aware path).
enum PayloadKey: CaseIterable {
    /// `aps`.
    case aps
    /// `alert`.
    case alert
    /// `badge`.
    case badge
    /// `sound`.
    case sound
    /// `title`.
    case title
    /// `subtitle`.
    case subtitle
    /// `body`.
    case body
    /// `content-available`.
    case contentAvailable
    /// `mutable-content`.
    case mutableContent
    /// `category`.
    case category
    /// `thread-id`.
    case threadID
    /// `target-content-id`.
    case targetContentID
    /// `interruption-level`.
    case interruptionLevel
    /// `relevance-score`.
    case relevanceScore
    /// `filter-criteria`.
    case filterCriteria
    /// `stale-date`.
    case staleDate
    /// `content-state`.
    case contentState
    /// `timestamp`.
    case timestamp
    /// `event`.
    case event
    /// `dismissal-date`.
    case dismissalDate
    /// `attributes-type`.
    case attributesType
    /// `attributes`.
    case attributes
    /// Live Activity `input-push-token`.
    case inputPushToken
    /// Live Activity `input-push-channel`.
    case inputPushChannel
    /// Widgets and controls `content-changed`.
    case contentChanged
    /// `launch-image`.
    case launchImage
    /// `title-loc-key`.
    case titleLocKey
    /// `title-loc-args`.
    case titleLocArgs
    /// `subtitle-loc-key`.
    case subtitleLocKey
    /// `subtitle-loc-args`.
    case subtitleLocArgs
    /// `loc-key`.
    case locKey
    /// `loc-args`.
    case locArgs
    /// `action-loc-key`.
    case actionLocKey
    /// `show-view`.
    case showView
    /// `critical`.
    case critical
    /// `name`.
    case name
    /// `volume`.
    case volume

    /// The key as written.
    var name: String {
        switch self {
        case .aps: "aps"
        case .alert: "alert"
        case .badge: "badge"
        case .sound: "sound"
        case .title: "title"
        case .subtitle: "subtitle"
        case .body: "body"
        case .contentAvailable: "content-available"
        case .mutableContent: "mutable-content"
        case .category: "category"
        case .threadID: "thread-id"
        case .targetContentID: "target-content-id"
        case .interruptionLevel: "interruption-level"
        case .relevanceScore: "relevance-score"
        case .filterCriteria: "filter-criteria"
        case .staleDate: "stale-date"
        case .contentState: "content-state"
        case .timestamp: "timestamp"
        case .event: "event"
        case .dismissalDate: "dismissal-date"
        case .attributesType: "attributes-type"
        case .attributes: "attributes"
        case .inputPushToken: "input-push-token"
        case .inputPushChannel: "input-push-channel"
        case .contentChanged: "content-changed"
        case .launchImage: "launch-image"
        case .titleLocKey: "title-loc-key"
        case .titleLocArgs: "title-loc-args"
        case .subtitleLocKey: "subtitle-loc-key"
        case .subtitleLocArgs: "subtitle-loc-args"
        case .locKey: "loc-key"
        case .locArgs: "loc-args"
        case .actionLocKey: "action-loc-key"
        case .showView: "show-view"
        case .critical: "critical"
        case .name: "name"
        case .volume: "volume"
        }
    }

    /// The documented key `key` names, or nil.
    init?(_ key: String) {
        var key = key
        guard let known = key.withUTF8({ PayloadKey(bytes: $0) }) else { return nil }
        self = known
    }

    /// The documented key spelled by `bytes`, or nil.
    init?(bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress else { return nil }
        func spells(_ candidate: StaticString) -> Bool {
            let expected = candidate.utf8Start
            for offset in 0..<bytes.count where start[offset] != expected[offset] { return false }
            return true
        }
        switch bytes.count {
        case 3:
            if spells("aps") { self = .aps; return }
        case 4:
            if spells("body") { self = .body; return }
            if spells("name") { self = .name; return }
        case 5:
            if spells("alert") { self = .alert; return }
            if spells("badge") { self = .badge; return }
            if spells("sound") { self = .sound; return }
            if spells("title") { self = .title; return }
            if spells("event") { self = .event; return }
        case 6:
            if spells("volume") { self = .volume; return }
        case 7:
            if spells("loc-key") { self = .locKey; return }
        case 8:
            if spells("subtitle") { self = .subtitle; return }
            if spells("category") { self = .category; return }
            if spells("loc-args") { self = .locArgs; return }
            if spells("critical") { self = .critical; return }
        case 9:
            if spells("thread-id") { self = .threadID; return }
            if spells("timestamp") { self = .timestamp; return }
            if spells("show-view") { self = .showView; return }
        case 10:
            if spells("stale-date") { self = .staleDate; return }
            if spells("attributes") { self = .attributes; return }
        case 12:
            if spells("launch-image") { self = .launchImage; return }
        case 13:
            if spells("content-state") { self = .contentState; return }
            if spells("title-loc-key") { self = .titleLocKey; return }
        case 14:
            if spells("dismissal-date") { self = .dismissalDate; return }
            if spells("title-loc-args") { self = .titleLocArgs; return }
            if spells("action-loc-key") { self = .actionLocKey; return }
        case 15:
            if spells("mutable-content") { self = .mutableContent; return }
            if spells("relevance-score") { self = .relevanceScore; return }
            if spells("filter-criteria") { self = .filterCriteria; return }
            if spells("attributes-type") { self = .attributesType; return }
            if spells("content-changed") { self = .contentChanged; return }
        case 16:
            if spells("subtitle-loc-key") { self = .subtitleLocKey; return }
            if spells("input-push-token") { self = .inputPushToken; return }
        case 17:
            if spells("content-available") { self = .contentAvailable; return }
            if spells("target-content-id") { self = .targetContentID; return }
            if spells("subtitle-loc-args") { self = .subtitleLocArgs; return }
        case 18:
            if spells("interruption-level") { self = .interruptionLevel; return }
            if spells("input-push-channel") { self = .inputPushChannel; return }
        default: break
        }
        return nil
    }
}

extension PayloadKey {
    /// The payload's documented keys as the parser's table of known keys: parsing a payload then hands
    /// out these constant strings instead of building a new one per key.
    static func knownName(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        PayloadKey(bytes: bytes)?.name
    }
}

extension JSONValue {
    /// A record's value that is, or holds, a payload, parsed with the payload's documented keys
    /// taken from ``PayloadKey``'s table: the one way the validators read a value into a tree.
    init(parsingPayload bytes: RecordBytes, maxDepth: Int = JSONValue.maximumDepth) throws(JSONParseError) {
        self = try bytes.withUnsafeBufferPointer { (buffer) throws(JSONParseError) in
            try JSONValue(parsing: buffer, maxDepth: maxDepth, knownKeys: PayloadKey.knownName)
        }
    }
}
