package import Foundation
import JSON
package import Notifications
import OpenSSLCrypto
package import Records

/// Everything the rules need to apply one push to one Live Activity (SEMANTICS sections 14 and
/// 15): the activity token, the request it comes from and what was decided of it before.
///
/// A command is a value, so that the worker owning the activity token's partition can execute it
/// wherever the request was prepared: ``record(topic:)`` writes it as a record keyed by the
/// activity token (value: the request's value as received; headers: `dispatcher-*` headers then
/// the request's own), and ``init(parsing:)`` reads it back.
package struct ActivityCommand: Sendable {
    /// Where the command comes from.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A device's `liveactivity` request (`start`, `update`, `end`, or a malformed event): rows
        /// 1 to 9 of section 14.3.
        case request
        /// One subscribed activity of a broadcast: rows 1 and 4 to 9 (section 15).
        case broadcast
    }

    /// The activity token: for `start`, the hex SHA-256 of `<normalised key>/<apnsId>` (section
    /// 14.2); otherwise the request's normalised key; for a broadcast, the subscribed activity's.
    package var activityToken: String
    /// A device's request or a broadcast.
    package var kind: Kind
    /// The request's normalised key (the push token), nil for a broadcast.
    package var deviceToken: String?
    /// The request's key as received (its dead letter keeps it), nil when it had none.
    package var key: RecordBytes?
    /// The request's headers as received.
    package var headers: [RecordHeader]
    /// The request's value as received.
    package var value: RecordBytes
    /// Where the request came from (its dead letter names it).
    package var source: TopicPartitionOffset
    /// The request's `now` (its deliveries' `receivedAt`).
    package var receivedAt: Date
    /// The request's `apns-id` (a broadcast's identifier).
    package var apnsID: MessageID
    /// The bundle ID.
    package var bundleID: String
    /// The `apns-topic` as given.
    package var topic: String
    /// The priority (10 or 5).
    package var priority: Priority
    /// The app's state, as resolved when the request was prepared (section 6).
    package var appState: AppState
    /// Where ``appState`` came from.
    package var appStateSource: AppStateSource
    /// The broadcast's channel ID, nil for a device's request.
    package var channelID: String?
    /// Whether the broadcast's `apns-expiration` had passed: the delivery is discarded, `expired`.
    package var isExpired: Bool
    /// The payload, validated.
    package let payload: Payload

    /// The payload's `aps.event`, nil when absent.
    package var event: LiveActivityEvent? {
        payload.aps.event.flatMap(LiveActivityEvent.init(rawValue:))
    }

    /// The command of a device's valid `liveactivity` request.
    init(request: NotificationRequest, record: RequestRecord, appState: AppState, appStateSource: AppStateSource) {
        let isStart = request.payload.aps.event == LiveActivityEvent.start.rawValue
        activityToken = isStart ? Self.startToken(deviceToken: request.deviceToken, apnsID: request.apnsID) : request.deviceToken
        kind = .request
        deviceToken = request.deviceToken
        key = record.key
        headers = request.headers
        value = record.value ?? RecordBytes(request.payload.serialized())
        source = request.source
        receivedAt = request.receivedAt
        apnsID = request.apnsID
        bundleID = request.bundleID
        topic = request.topic
        priority = request.priority
        self.appState = appState
        self.appStateSource = appStateSource
        channelID = nil
        isExpired = false
        payload = request.payload
    }

    /// The command of a valid broadcast for the subscribed activity `activityToken`.
    init(
        broadcast: BroadcastRequest, record: RequestRecord, activityToken: String, appState: AppState,
        appStateSource: AppStateSource, isExpired: Bool
    ) {
        self.activityToken = activityToken
        kind = .broadcast
        deviceToken = nil
        key = record.key
        headers = broadcast.headers
        value = record.value ?? RecordBytes(broadcast.payload.serialized())
        source = broadcast.source
        receivedAt = broadcast.receivedAt
        apnsID = broadcast.requestID
        bundleID = broadcast.bundleID
        topic = broadcast.bundleID
        priority = broadcast.priority
        self.appState = appState
        self.appStateSource = appStateSource
        channelID = broadcast.channelID
        self.isExpired = isExpired
        payload = broadcast.payload
    }

    /// The token of the activity a `start` creates (section 14.2): the lowercase hex SHA-256 of
    /// the UTF-8 string `<normalised key>/<apnsId>`.
    package static func startToken(deviceToken: String, apnsID: MessageID) -> String {
        Hex.lowercase(SHA256.hash("\(deviceToken)/\(apnsID)".utf8))
    }

    /// The request the delivery is about: for a broadcast, addressed to the activity token, with
    /// the broadcast's identifier and no collapse ID.
    var request: NotificationRequest {
        NotificationRequest(
            deviceToken: deviceToken ?? activityToken, topic: topic, bundleID: bundleID, pushType: .liveactivity,
            pushTypeWasGiven: true, priority: priority, apnsID: apnsID, apnsIDWasGiven: headers.lastValue(named: "apns-id") != nil,
            expiration: headers.lastValue(named: "apns-expiration").flatMap { Int64(String(decoding: $0, as: UTF8.self)) }.flatMap { $0 == 0 ? nil : $0 },
            collapseID: kind == .broadcast ? nil : headers.lastValue(named: "apns-collapse-id").flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) },
            appStateOverride: kind == .broadcast ? nil : headers.lastValue(named: "app-state").flatMap { AppState(rawValue: String(decoding: $0, as: UTF8.self)) },
            traceparent: headers.lastValue(named: "traceparent"), headers: headers,
            payload: payload, source: source, receivedAt: receivedAt)
    }

    /// The request as received, for its dead letter.
    var requestRecord: RequestRecord {
        RequestRecord(key: key, headers: headers, value: value, source: source)
    }
}

// MARK: The command as a record

extension ActivityCommand {
    /// The names of the command's own headers, before the request's.
    enum HeaderName {
        static let kind = "dispatcher-command"
        static let deviceToken = "dispatcher-device-token"
        static let key = "dispatcher-key"
        static let sourceTopic = "dispatcher-source-topic"
        static let sourcePartition = "dispatcher-source-partition"
        static let sourceOffset = "dispatcher-source-offset"
        static let receivedAt = "dispatcher-received-at"
        static let apnsID = "dispatcher-apns-id"
        static let bundleID = "dispatcher-bundle-id"
        static let topic = "dispatcher-topic"
        static let priority = "dispatcher-priority"
        static let appState = "dispatcher-app-state"
        static let appStateSource = "dispatcher-app-state-source"
        static let channelID = "dispatcher-channel-id"
        static let expired = "dispatcher-expired"
        /// The last of the command's own headers: how many of the request's follow it.
        static let requestHeaders = "dispatcher-request-headers"
    }

    /// The command as a record for `topic` (an internal topic of the worker): key = the activity
    /// token, value = the request's value as received, headers = the command's `dispatcher-*`
    /// headers, then the request's own headers as received. Partition nil: the worker sets it.
    package func record(topic: String) -> OutputRecord {
        var own: [(String, RecordBytes)] = [
            (HeaderName.kind, RecordBytes(kind.rawValue)),
        ]
        if let deviceToken { own.append((HeaderName.deviceToken, RecordBytes(deviceToken))) }
        if let key { own.append((HeaderName.key, key)) }
        own += [
            (HeaderName.sourceTopic, RecordBytes(source.topic)),
            (HeaderName.sourcePartition, RecordBytes(String(source.partition))),
            (HeaderName.sourceOffset, RecordBytes(String(source.offset))),
            // Seconds as Swift writes a double: its shortest text that reads back to the same value.
            (HeaderName.receivedAt, RecordBytes("\(receivedAt.timeIntervalSince1970)")),
            (HeaderName.apnsID, RecordBytes(apnsID.utf8)),
            (HeaderName.bundleID, RecordBytes(bundleID)),
            (HeaderName.topic, RecordBytes(topic)),
            (HeaderName.priority, RecordBytes(String(priority.rawValue))),
            (HeaderName.appState, RecordBytes(appState.rawValue)),
            (HeaderName.appStateSource, RecordBytes(appStateSource.rawValue)),
        ]
        if let channelID { own.append((HeaderName.channelID, RecordBytes(channelID))) }
        own.append((HeaderName.expired, RecordBytes(isExpired ? "true" : "false")))
        own.append((HeaderName.requestHeaders, RecordBytes(String(headers.count))))
        return OutputRecord(
            kind: .command, topic: topic, key: RecordBytes(activityToken),
            headers: own.map { RecordHeader(name: $0.0, value: $0.1) } + headers, value: value)
    }

    /// Reads a command back from its record (``record(topic:)``).
    /// - Throws: ``ActivityCommandError`` naming what is missing or malformed; never traps on input.
    package init(parsing record: RequestRecord) throws(ActivityCommandError) {
        guard let keyBytes = record.key, let token = AppStatesTable.normalisedToken(keyBytes) else {
            throw ActivityCommandError("the key is not an activity token (64 to 200 hexadecimal characters, even length)")
        }
        var own: [String: RecordBytes] = [:]
        var requestHeaders: [RecordHeader]?
        for (index, header) in record.headers.enumerated() {
            guard header.name.hasPrefix("dispatcher-") else {
                throw ActivityCommandError("the header \(header.name) comes before \(HeaderName.requestHeaders)")
            }
            guard let value = header.value else { throw ActivityCommandError("the header \(header.name) has no value") }
            guard own.updateValue(value, forKey: header.name) == nil else { throw ActivityCommandError("the header \(header.name) is repeated") }
            if header.name == HeaderName.requestHeaders {
                let rest = record.headers[(index + 1)...]
                guard let count = Int(String(decoding: value, as: UTF8.self)), count == rest.count else {
                    throw ActivityCommandError("\(HeaderName.requestHeaders) does not give the number of headers after it")
                }
                requestHeaders = Array(rest)
                break
            }
        }
        guard let requestHeaders else { throw ActivityCommandError("the header \(HeaderName.requestHeaders) is missing") }
        func text(_ name: String) throws(ActivityCommandError) -> String {
            guard let bytes = own[name], let text = String(validating: bytes, as: UTF8.self) else {
                throw ActivityCommandError("the header \(name) is missing or not UTF-8")
            }
            return text
        }
        guard let kind = Kind(rawValue: try text(HeaderName.kind)) else {
            throw ActivityCommandError("\(HeaderName.kind) is not request or broadcast")
        }
        var deviceToken: String?
        if let bytes = own[HeaderName.deviceToken] {
            guard let normalised = AppStatesTable.normalisedToken(bytes) else {
                throw ActivityCommandError("\(HeaderName.deviceToken) is not a device token")
            }
            deviceToken = normalised
        }
        guard (kind == .request) == (deviceToken != nil) else {
            throw ActivityCommandError("\(HeaderName.deviceToken) must be given for a request's command and only for it")
        }
        guard let partition = Int32(try text(HeaderName.sourcePartition)), let offset = Int64(try text(HeaderName.sourceOffset)) else {
            throw ActivityCommandError("\(HeaderName.sourcePartition) or \(HeaderName.sourceOffset) is not an integer")
        }
        guard let seconds = Double(try text(HeaderName.receivedAt)), seconds.isFinite else {
            throw ActivityCommandError("\(HeaderName.receivedAt) is not a number of seconds")
        }
        guard let apnsID = MessageID(try text(HeaderName.apnsID)) else {
            throw ActivityCommandError("\(HeaderName.apnsID) is not a UUID")
        }
        guard let priorityNumber = Int(try text(HeaderName.priority)), let priority = Priority(rawValue: priorityNumber), priority != .low else {
            throw ActivityCommandError("\(HeaderName.priority) is not 10 or 5")
        }
        guard let appState = AppState(rawValue: try text(HeaderName.appState)),
            let appStateSource = AppStateSource(rawValue: try text(HeaderName.appStateSource))
        else {
            throw ActivityCommandError("\(HeaderName.appState) or \(HeaderName.appStateSource) is not one of its values")
        }
        let expired = try text(HeaderName.expired)
        guard expired == "true" || expired == "false" else { throw ActivityCommandError("\(HeaderName.expired) is not true or false") }
        var channelID: String?
        if own[HeaderName.channelID] != nil { channelID = try text(HeaderName.channelID) }
        guard (kind == .broadcast) == (channelID != nil) else {
            throw ActivityCommandError("\(HeaderName.channelID) must be given for a broadcast's command and only for it")
        }
        guard let value = record.value, !value.isEmpty else { throw ActivityCommandError("the value (the request's payload) is empty") }
        let payload: Payload
        do {
            let json = try JSONValue(parsing: value)
            payload = try Payload(validating: json, pushType: .liveactivity, profile: .modern)
        } catch {
            throw ActivityCommandError("the value is not a valid liveactivity payload")
        }
        self.activityToken = token
        self.kind = kind
        self.deviceToken = deviceToken
        self.key = own[HeaderName.key]
        self.headers = requestHeaders
        self.value = value
        self.source = TopicPartitionOffset(topic: try text(HeaderName.sourceTopic), partition: partition, offset: offset)
        self.receivedAt = Date(timeIntervalSince1970: seconds)
        self.apnsID = apnsID
        self.bundleID = try text(HeaderName.bundleID)
        self.topic = try text(HeaderName.topic)
        self.priority = priority
        self.appState = appState
        self.appStateSource = appStateSource
        self.channelID = channelID
        self.isExpired = expired == "true"
        self.payload = payload
    }
}

/// Why a record is not an ``ActivityCommand``: a sentence naming the header or part that is wrong.
package struct ActivityCommandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    package let message: String

    /// An error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
