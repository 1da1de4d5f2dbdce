public import Foundation
import JSON
public import Notifications
public import Records

/// A notification stored for an offline device (SEMANTICS section 16.2): the stored record's value,
/// under the key `<device token>/<bundle ID>`.
public struct StoredNotification: Sendable {
    /// `apnsId`.
    public var apnsID: MessageID
    /// `deviceToken`: the normalised token.
    public var deviceToken: String
    /// `bundleId`.
    public var bundleID: String
    /// `topic`: the `apns-topic` as given.
    public var topic: String
    /// `pushType`.
    public var pushType: PushType
    /// `priority`.
    public var priority: Priority
    /// `collapseId`.
    public var collapseID: String?
    /// `expiration`: the `apns-expiration` header's integer, nil when absent.
    public var expiration: Int64?
    /// `expiresAt`: when the notification is discarded, in milliseconds since the epoch.
    public var expiresAt: Int64
    /// `receivedAt`: the request's `now`.
    public var receivedAt: Date
    /// `headers`: the request's headers as received.
    public var headers: [RecordHeader]
    /// `payload`: as received.
    public var payload: Payload

    /// The table key, `<device token>/<bundle ID>`.
    package var key: String { Self.key(deviceToken: deviceToken, bundleID: bundleID) }

    /// The table key of a token and an app.
    package static func key(deviceToken: String, bundleID: String) -> String { deviceToken + "/" + bundleID }

    /// The stored form of `request`, kept at most `storagePeriod` (section 16.2): `expiresAt` is
    /// `min(expiration × 1000, receivedAt + storagePeriod)` with a non-zero expiration, else
    /// `receivedAt + storagePeriod`.
    package init(_ request: NotificationRequest, storagePeriod: Duration) {
        apnsID = request.apnsID
        deviceToken = request.deviceToken
        bundleID = request.bundleID
        topic = request.topic
        pushType = request.pushType
        priority = request.priority
        collapseID = request.collapseID
        expiration = request.expiration
        let received = Timestamp.milliseconds(request.receivedAt)
        let (seconds, attoseconds) = storagePeriod.components
        let capped = received + seconds * 1_000 + attoseconds / 1_000_000_000_000_000
        let (byHeader, overflow) = (request.expiration ?? 0).multipliedReportingOverflow(by: 1_000)
        expiresAt = request.expiration.map { _ in overflow ? capped : min(byHeader, capped) } ?? capped
        receivedAt = request.receivedAt
        headers = request.headers
        payload = request.payload
    }

    /// The request's `traceparent` header (the last one), nil when it had none.
    public var traceparent: String? {
        traceparentBytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The same header's bytes, which the outputs carry as they are.
    var traceparentBytes: RecordBytes? { headers.lastValue(named: "traceparent") }

    /// The request as it arrived, rebuilt to run the rules again when its device comes back online
    /// (section 16.3): the `app-state` and `traceparent` headers as received, `source` the record
    /// that delivers it.
    func request(source: TopicPartitionOffset) -> NotificationRequest {
        var request = NotificationRequest(
            deviceToken: deviceToken, topic: topic, bundleID: bundleID, pushType: pushType,
            pushTypeWasGiven: headers.lastValue(named: "apns-push-type") != nil, priority: priority, apnsID: apnsID,
            apnsIDWasGiven: headers.lastValue(named: "apns-id") != nil, expiration: expiration, collapseID: collapseID,
            appStateOverride: headers.lastValue(named: "app-state").flatMap { AppState(rawValue: String(decoding: $0, as: UTF8.self)) },
            traceparent: traceparentBytes, headers: headers,
            payload: payload, source: source, receivedAt: receivedAt)
        request.expirationIsZero = false
        return request
    }

    /// The stored record's value (section 16.2), fields in the documented order; `headers` an
    /// object whose repeated names are repeated keys, in the order received (section 1).
    package var bytes: [UInt8] {
        var writer = JSONWriter(capacity: payload.byteCountHint + 512)
        writer.append(#"{"apnsId":"#)
        writer.write(messageID: apnsID)
        writer.append(#","deviceToken":"#)
        writer.write(string: deviceToken)
        writer.append(#","bundleId":"#)
        writer.write(string: bundleID)
        writer.append(#","topic":"#)
        writer.write(string: topic)
        writer.append(#","pushType":"#)
        writer.write(string: pushType.rawValue)
        writer.append(#","priority":"#)
        writer.write(integer: priority.rawValue)
        writer.append(#","collapseId":"#)
        writer.write(stringOrNull: collapseID)
        writer.append(#","expiration":"#)
        if let expiration { writer.write(integer: Int(expiration)) } else { writer.append("null") }
        writer.append(#","expiresAt":"#)
        writer.write(integer: Int(expiresAt))
        writer.append(#","receivedAt":"#)
        writer.write(string: Timestamp.rfc3339(receivedAt))
        writer.append(#","headers":{"#)
        for (position, header) in headers.enumerated() {
            if position > 0 { writer.append(",") }
            writer.write(string: header.name)
            writer.append(":")
            if let value = header.value { writer.write(string: String(decoding: value, as: UTF8.self)) } else { writer.append("null") }
        }
        writer.append(#"},"payload":"#)
        writer.write(payload: payload)
        writer.append("}")
        return writer.finish()
    }

    /// Reads a stored record's value (section 16.2).
    /// - Throws: ``StateRecordError`` naming the field that is wrong.
    package init(parsing value: RecordBytes) throws(StateRecordError) {
        // Repeated keys kept: the headers object writes a repeated header as a repeated key.
        let parsed = try? value.withUnsafeBufferPointer { (buffer) throws(JSONParseError) in
            try JSONValue(parsingKeepingRepeatedKeys: buffer, maxDepth: JSONValue.maximumDepth + 2)
        }
        guard let object = parsed?.objectValue else {
            throw StateRecordError("the value is not a JSON object")
        }
        func string(_ name: String) throws(StateRecordError) -> String {
            guard let text = object[name]?.stringValue else { throw StateRecordError("\(name) is missing or not a string") }
            return text
        }
        func integer(_ name: String) -> Int64? { object[name].flatMap(ActivityEntry.integer) }
        guard let apnsID = MessageID(try string("apnsId")) else { throw StateRecordError("apnsId is not a UUID") }
        self.apnsID = apnsID
        guard let token = AppStatesTable.normalisedToken(try string("deviceToken").utf8) else {
            throw StateRecordError("deviceToken is not a device token")
        }
        deviceToken = token
        bundleID = try string("bundleId")
        topic = try string("topic")
        guard let pushType = PushType(rawValue: try string("pushType")) else { throw StateRecordError("pushType is not a push type") }
        self.pushType = pushType
        guard let number = integer("priority"), let priority = Priority(rawValue: Int(number)) else {
            throw StateRecordError("priority is not 10, 5 or 1")
        }
        self.priority = priority
        switch object["collapseId"] {
        case nil, .null?: collapseID = nil
        case .string(let text)?: collapseID = text
        default: throw StateRecordError("collapseId is not a string or null")
        }
        switch object["expiration"] {
        case nil, .null?: expiration = nil
        case let value?:
            guard let seconds = ActivityEntry.integer(value) else { throw StateRecordError("expiration is not an integer or null") }
            expiration = seconds
        }
        guard let expiresAt = integer("expiresAt") else { throw StateRecordError("expiresAt is missing or not an integer") }
        self.expiresAt = expiresAt
        guard let received = Timestamp.parse(try string("receivedAt")) else {
            throw StateRecordError("receivedAt is not an RFC 3339 time with milliseconds")
        }
        receivedAt = received
        guard case .object(let headerObject)? = object["headers"] else { throw StateRecordError("headers is missing or not an object") }
        var headers: [RecordHeader] = []
        for member in headerObject.members {
            switch member.value {
            case .string(let text): headers.append(RecordHeader(name: member.key, value: text))
            case .null: headers.append(RecordHeader(name: member.key, value: nil as [UInt8]?))
            default: throw StateRecordError("a header value is not a string")
            }
        }
        self.headers = headers
        guard let payloadValue = object["payload"] else { throw StateRecordError("payload is missing") }
        do throws(PayloadError) {
            payload = try Payload(validating: payloadValue, pushType: pushType, profile: .modern)
        } catch {
            throw StateRecordError("payload is not a valid payload")
        }
    }
}
