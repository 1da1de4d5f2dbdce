import Records
import JSON

extension RequestValidator {
    /// The device token: 64 to 200 hexadecimal characters of even length, normalised to lowercase.
    static func deviceToken(_ key: RecordBytes?) throws(Rejection) -> String {
        guard let key, !key.isEmpty else {
            throw Rejection(.missingDeviceToken, "The device token (the record key) is missing or empty.")
        }
        guard key.count >= 64, key.count <= 200, key.count % 2 == 0 else {
            throw Rejection(
                .badDeviceToken,
                "The device token (the record key) \(MessageText.quote(bytes: key)) has \(key.count) characters; it must have an even number from 64 to 200."
            )
        }
        var allHex = true
        let token = String(unsafeUninitializedCapacity: key.count) { text in
            // Eight bytes at a time, then the tail (a length is even, not always a multiple of eight) byte
            // by byte; without a branch per word: a word that is not all digits is noted, and the
            // whole key refused after the loop.
            key.withUnsafeBytes { digits in
                let words = digits.count / 8
                for word in 0..<words {
                    let (lower, isHex) = Hex.folded(word: digits.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self))
                    allHex = allHex && isHex
                    UnsafeMutableRawPointer(text.baseAddress! + word * 8).storeBytes(of: lower, as: UInt64.self)
                }
                for position in (words * 8)..<digits.count {
                    let (lower, isHex) = Hex.folded(digits[position])
                    allHex = allHex && isHex
                    text[position] = lower
                }
                return allHex ? digits.count : 0
            }
        }
        guard allHex else {
            throw Rejection(.badDeviceToken, "The device token (the record key) \(MessageText.quote(bytes: key)) is not hexadecimal.")
        }
        return token
    }

    /// `10`, `5` or `1`, exactly.
    static func priority(_ value: RecordBytes) -> Priority? {
        // Byte by byte: a `case` of an array literal built a `RecordBytes`, an array's allocation, per pattern tried.
        switch (value.count, value.first) {
        case (2, UInt8(ascii: "1")) where value[value.startIndex + 1] == UInt8(ascii: "0"): .immediate
        case (1, UInt8(ascii: "5")): .conserve
        case (1, UInt8(ascii: "1")): .low
        default: nil
        }
    }

    /// A non-negative decimal integer that fits in 64 bits; only digits.
    static func unsignedInteger(_ value: RecordBytes) -> Int64? {
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

    /// Empty, too large, then not valid: the payload rules in their order.
    func payload(_ value: RecordBytes?, limit: Int, pushType: PushType?) throws(Rejection) -> Payload {
        guard let value, !value.isEmpty else {
            throw Rejection(.payloadEmpty, "The payload (the record value) is empty.")
        }
        guard value.count <= limit else {
            throw Rejection(
                .payloadTooLarge,
                "The payload (the record value) has \(value.count) bytes, more than the \(limit) allowed for the push type \(pushType?.rawValue ?? "alert") in the \(profile.rawValue) profile."
            )
        }
        // The usual case: validated in place, no tree built. An mdm payload needs its own rules
        // (section 2: `mdm` instead of `aps`), which only the tree applies.
        if pushType != .mdm, let payload = Payload(viewing: value) { return payload }
        // Invalid or unusual bytes: the tree decides, and words the error.
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONValue(parsingPayload: value)
        } catch {
            throw Rejection(.invalidPayload, "The payload (the record value) is not valid JSON: \(error.message) at byte \(error.offset).")
        }
        do throws(PayloadError) {
            return try Payload(validating: json, pushType: pushType, profile: profile)
        } catch {
            throw Rejection(.invalidPayload, error.message)
        }
    }

    /// The push type when `apns-push-type` is absent: `alert` with `alert`, `badge` or `sound`; else
    /// `background` when `content-available` is 1; else `alert`.
    static func inferredPushType(_ payload: Payload) -> PushType {
        let traits = payload.storage.traits
        if traits.hasAlert || traits.hasBadge || traits.hasSound { return .alert }
        return payload.contentAvailable ? .background : .alert
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
