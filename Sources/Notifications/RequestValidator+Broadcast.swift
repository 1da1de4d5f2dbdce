public import Foundation
import JSON
import Records

extension RequestValidator {
    /// Whether `record` is a broadcast request: it has an `apns-channel-id` header, whatever its
    /// value, empty included (SEMANTICS section 15).
    package static func isBroadcast(_ record: RequestRecord) -> Bool {
        RequestHeaders(record.headers).channelID != nil
    }

    /// The identifier a broadcast's outputs carry when it has no `apns-id` header: the
    /// `apns-request-id` header as given (the last one, when repeated), else the identifier derived
    /// from the record's source (section 15).
    package static func broadcastIdentifier(_ record: RequestRecord) -> String {
        let given = record.headers.last { $0.value != nil && $0.name.lowercased() == "apns-request-id" }?.value
        return given.map { String(decoding: $0, as: UTF8.self) } ?? MessageID.derived(for: record.source).description
    }

    /// Runs checks 1 to 6 of a broadcast request (section 15) in order; the dispatcher runs 7 and 8,
    /// which read the configuration's entitlements and the channels table.
    /// - Returns: the broadcast, or the rejection of the first check it fails.
    public func validateBroadcast(_ record: RequestRecord, receivedAt: Date = Date()) -> Result<BroadcastRequest, Rejection> {
        do throws(Rejection) {
            return .success(try checkBroadcast(record, headers: RequestHeaders(record.headers), receivedAt: receivedAt))
        } catch {
            return .failure(error)
        }
    }

    /// The checks, in order.
    func checkBroadcast(_ record: RequestRecord, headers: RequestHeaders, receivedAt: Date) throws(Rejection) -> BroadcastRequest {
        // 1. No apns-* header is repeated.
        if let repeated = headers.repeatedAPNSHeader {
            throw Rejection(
                .duplicateHeaders,
                "The header \(MessageText.quote(repeated)) is repeated; APNs refuses a request whose apns-* headers appear more than once.")
        }
        // The legacy profile has no broadcast (section 8).
        if profile == .legacy {
            throw Rejection(.featureNotEnabled, "Broadcast push does not exist in the legacy profile (dispatch.profile).")
        }
        // 2. The topic: a configured bundle ID, without a push-type suffix.
        guard let topicBytes = headers.topic, !topicBytes.isEmpty else {
            throw Rejection(.missingTopic, "The apns-topic header is missing or empty.")
        }
        guard let topic = topicBytes.withUnsafeBufferPointer(UTF8Check.string) else {
            throw Rejection(.topicDisallowed, "The apns-topic header \(MessageText.quote(bytes: topicBytes)) is not valid UTF-8.")
        }
        if let (pushType, suffix) = Self.suffixedPushType(of: topic) {
            throw Rejection(
                .topicDisallowed,
                "The apns-topic header \(MessageText.quote(topic)) ends in \(MessageText.quote(suffix)), the suffix of the push type \(pushType.rawValue); a broadcast's topic is the bundle ID alone.")
        }
        try Self.requireAllowed(topic, topic: topic, allowed: allowedBundleIDs)
        // 3. The push type: liveactivity, in any ASCII case.
        guard let pushType = headers.pushType else {
            throw Rejection(.missingPushType, "The apns-push-type header is missing; a broadcast needs liveactivity.")
        }
        guard String(decoding: pushType, as: UTF8.self).lowercased() == "liveactivity" else {
            throw Rejection(
                .invalidPushType, "The apns-push-type header \(MessageText.quote(bytes: pushType)) is not liveactivity, the only push type a broadcast may have.")
        }
        // 4. The channel ID.
        let channelBytes = headers.channelID ?? []
        guard !channelBytes.isEmpty else {
            throw Rejection(.missingChannelId, "The apns-channel-id header is empty.")
        }
        guard channelBytes.count <= BroadcastRequest.longestChannelID else {
            throw Rejection(
                .badChannelId,
                "The apns-channel-id header \(MessageText.quote(bytes: channelBytes)) has \(channelBytes.count) characters, more than \(BroadcastRequest.longestChannelID).")
        }
        guard Self.isPaddedBase64(channelBytes) else {
            throw Rejection(
                .badChannelId, "The apns-channel-id header \(MessageText.quote(bytes: channelBytes)) is not standard base64 with padding.")
        }
        // 5. apns-request-id, apns-priority, apns-expiration.
        var requestID: MessageID?
        if let value = headers.requestID {
            guard let given = MessageID(text: value) else {
                throw Rejection(
                    .badMessageId,
                    "The apns-request-id header \(MessageText.quote(bytes: value)) is not a UUID of the form 8-4-4-4-12 hexadecimal digits.")
            }
            requestID = given
        }
        var priority = Priority.immediate
        if let value = headers.priority {
            guard let given = Self.priority(value), given != .low else {
                throw Rejection(.badPriority, "The apns-priority header \(MessageText.quote(bytes: value)) is not 10 or 5, the priorities of a broadcast.")
            }
            priority = given
        }
        var expiration: Int64?
        if let value = headers.expiration {
            guard let seconds = Self.unsignedInteger(value) else {
                throw Rejection(
                    .badExpirationDate,
                    "The apns-expiration header \(MessageText.quote(bytes: value)) is not a non-negative integer of UNIX seconds.")
            }
            expiration = seconds == 0 ? nil : seconds
        }
        // 6. The payload.
        let payload = try broadcastPayload(record.value)
        return BroadcastRequest(
            bundleID: topic, channelID: String(decoding: channelBytes, as: UTF8.self),
            requestID: requestID ?? MessageID.derived(for: record.source), requestIDWasGiven: requestID != nil,
            priority: priority, expiration: expiration,
            traceparent: headers.traceparent.map { String(decoding: $0, as: UTF8.self) }, headers: record.headers,
            payload: payload, source: record.source, receivedAt: receivedAt)
    }

    /// Empty, over 5120 bytes, invalid (loc objects allowed), then `event` `start`.
    private func broadcastPayload(_ value: RecordBytes?) throws(Rejection) -> Payload {
        guard let value, !value.isEmpty else {
            throw Rejection(.payloadEmpty, "The payload (the record value) is empty.")
        }
        guard value.count <= BroadcastRequest.payloadLimit else {
            throw Rejection(
                .payloadTooLarge,
                "The payload (the record value) has \(value.count) bytes, more than the \(BroadcastRequest.payloadLimit) allowed for a broadcast.")
        }
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONValue(parsingPayload: value)
        } catch {
            throw Rejection(.invalidPayload, "The payload (the record value) is not valid JSON: \(error.message) at byte \(error.offset).")
        }
        let payload: Payload
        do throws(PayloadError) {
            payload = try Payload(validating: json, pushType: .liveactivity, profile: .modern)
        } catch {
            throw Rejection(.invalidPayload, error.message)
        }
        if payload.aps.event == "start" {
            throw Rejection(.invalidPayload, "The payload key aps.event is start, but a broadcast cannot start a Live Activity.")
        }
        // Delivered as its bytes, compacted from the text (the tree is built again only if asked).
        return Payload(validatedBytes: value, form: .general, traits: payload.storage.traits)
    }

    /// Whether `bytes` are standard base64 (`A-Z`, `a-z`, `0-9`, `+`, `/`) padded with `=` to a
    /// multiple of four characters.
    static func isPaddedBase64(_ bytes: RecordBytes) -> Bool {
        guard !bytes.isEmpty, bytes.count.isMultiple(of: 4) else { return false }
        let padding = bytes.reversed().prefix { $0 == UInt8(ascii: "=") }.count
        guard padding <= 2 else { return false }
        return bytes.dropLast(padding).allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "+"), UInt8(ascii: "/"):
                true
            default: false
            }
        }
    }
}
