import Records
import JSON

extension RequestValidator {
    /// The device token: 64 to 200 hexadecimal characters of even length, normalised to lowercase
    /// (a response's token follows the requests' rule, section 10).
    static func deviceToken(_ key: RecordBytes?) throws(Rejection) -> String {
        try key.withUnsafeBytesOrNil { (bytes) throws(Rejection) in try DeviceToken.check(bytes) }
        return DeviceToken.lowercased(key ?? [])
    }

    /// `10`, `5` or `1`, exactly.
    static func priority(_ value: RecordBytes) -> Priority? {
        value.withUnsafeBytes { priority($0) }
    }

    /// `10`, `5` or `1` as a ``Priority``; nil for anything else.
    static func priority(_ value: UnsafeRawBufferPointer) -> Priority? {
        switch (value.count, value.first) {
        case (2, UInt8(ascii: "1")) where value[1] == UInt8(ascii: "0"): .immediate
        case (1, UInt8(ascii: "5")): .conserve
        case (1, UInt8(ascii: "1")): .low
        default: nil
        }
    }

    /// A non-negative decimal integer that fits in 64 bits; only digits.
    static func unsignedInteger(_ value: RecordBytes) -> Int64? {
        value.withUnsafeBytes { unsignedInteger($0) }
    }

    /// Decimal digits as a non-negative `Int64`; nil when empty, not all digits, or too large.
    static func unsignedInteger(_ value: UnsafeRawBufferPointer) -> Int64? {
        guard !value.isEmpty else { return nil }
        var result: Int64 = 0
        for byte in value {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (shifted, overflowA) = result.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.addingReportingOverflow(Int64(digit))
            guard !overflowA, !overflowB else { return nil }
            result = next
        }
        return result
    }

    /// The push type when `apns-push-type` is absent: `alert` with `alert`, `badge` or `sound`; else
    /// `background` when `content-available` is 1; else `alert`.
    static func inferredPushType(_ traits: Payload.Traits) -> PushType {
        if traits.hasAlert || traits.hasBadge || traits.hasSound { return .alert }
        return traits.contentAvailable ? .background : .alert
    }

    /// The bundle ID: the topic less its push type's suffix. A topic ending in another push type's suffix,
    /// lacking its own, or made only of a suffix is `BadTopic`. For `mdm` the topic is the identifier.
    static func bundleID(topic: String, pushType: PushType) throws(Rejection) -> String {
        if let suffix = pushType.topicSuffix {
            guard topic.utf8.count > suffix.utf8.count, Self.hasSuffix(topic, suffix) else {
                throw Rejection(
                    .badTopic,
                    "The apns-topic header \(MessageText.quote(topic)) must be a bundle ID followed by \(MessageText.quote(suffix)) for the push type \(pushType.rawValue)."
                )
            }
            // The suffix is ASCII, so cutting its bytes leaves valid UTF-8.
            return String(decoding: topic.utf8.dropLast(suffix.utf8.count), as: UTF8.self)
        }
        if let (other, suffix) = suffixedPushType(of: topic) {
            throw Rejection(
                .badTopic,
                "The apns-topic header \(MessageText.quote(topic)) ends in \(MessageText.quote(suffix)), the suffix of the push type \(other.rawValue), but the push type is \(pushType.rawValue)."
            )
        }
        return topic
    }

    /// The push type whose topic suffix `topic` ends in, nil when it ends in none.
    static func suffixedPushType(of topic: String) -> (pushType: PushType, suffix: String)? {
        PushType.suffixed.first { hasSuffix(topic, $0.suffix) }
    }

    /// `TopicDisallowed` unless `bundleID` is configured under `apps`, or `apps` is empty.
    static func requireAllowed(_ bundleID: String, topic: String, allowed: Set<String>) throws(Rejection) {
        guard !allowed.isEmpty, !allowed.contains(bundleID) else { return }
        throw Rejection(
            .topicDisallowed,
            "The apns-topic header \(MessageText.quote(topic)) names the bundle ID \(MessageText.quote(bundleID)), which is not configured under apps."
        )
    }

    /// The `app-state` header: one of the states of section 1, exactly, else `BadAppState`.
    static func appState(_ value: RecordBytes) throws(Rejection) -> AppState {
        try value.withUnsafeBytes { (bytes) throws(Rejection) -> AppState in try appState(bytes) }
    }

    /// The `badge-increment` header's number (section 21.1): an optional `+` or `-`, then decimal
    /// digits, from -9999 to 9999 and not 0; else the rejection naming the value.
    static func badgeIncrement(_ value: UnsafeRawBufferPointer) throws(Rejection) -> Int {
        var digits = value[...]
        var sign = 1
        if let first = digits.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") {
            sign = first == UInt8(ascii: "-") ? -1 : 1
            digits = digits.dropFirst()
        }
        var magnitude = 0
        var valid = !digits.isEmpty
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else {
                valid = false
                break
            }
            // Past 9999 it is refused whatever follows: no need to count further (or overflow).
            magnitude = min(magnitude * 10 + Int(digit), 10_000)
        }
        guard valid, magnitude != 0, magnitude <= 9_999 else {
            throw Rejection(
                .badBadgeIncrement,
                "The badge-increment header \(MessageText.quote(bytes: value)) is not an integer from -9999 to 9999 other than 0.")
        }
        return sign * magnitude
    }

    /// The `app-state` header's state, or the rejection naming the value.
    static func appState(_ value: UnsafeRawBufferPointer) throws(Rejection) -> AppState {
        // The states' names are at most 15 bytes: a small string, no allocation.
        guard let state = AppState(rawValue: String(decoding: value, as: UTF8.self)) else {
            throw Rejection(
                .badAppState,
                "The app-state header \(MessageText.quote(bytes: value)) is not one of foreground, background, suspended, notRunning or forceQuit."
            )
        }
        return state
    }

    /// Whether `text` ends with the bytes of `suffix`, exactly (no Unicode equivalence, case-sensitive).
    static func hasSuffix(_ text: String, _ suffix: String) -> Bool {
        guard text.utf8.count >= suffix.utf8.count else { return false }
        var text = text, suffix = suffix
        return text.withUTF8 { textBytes in
            suffix.withUTF8 { suffixBytes in
                UnsafeBufferPointer(rebasing: textBytes[(textBytes.count - suffixBytes.count)...]).elementsEqual(suffixBytes)
            }
        }
    }
}
