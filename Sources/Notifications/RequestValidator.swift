import Records
public import Foundation
import JSON

/// Turns a request record into a `NotificationRequest`, or a `Rejection` with the APNs reason.
///
/// The checks run in the order of SEMANTICS.md section 1; the first failure is the reason:
/// repeated `apns-*` headers, device token, topic present, header formats (push type, id, priority,
/// expiration, collapse id, app state), payload (empty, too large, invalid), background with
/// priority 10 or liveactivity with priority 1, topic suffix and allowed bundle IDs. The checks
/// that read state tables (token checks, 429: section 12) are the dispatcher's.
public struct RequestValidator: Sendable {
    /// Whose rules apply; decides the size limit.
    public let profile: Profile
    /// The bundle IDs configured under `apps`; empty allows every topic.
    public let allowedBundleIDs: Set<String>
    /// Their topics, so that a request for a configured app decodes neither its topic nor its bundle ID.
    private let knownTopics: KnownTopics

    /// Makes a validator.
    public init(profile: Profile = .modern, allowedBundleIDs: Set<String> = []) {
        self.profile = profile
        self.allowedBundleIDs = allowedBundleIDs
        self.knownTopics = KnownTopics(bundleIDs: allowedBundleIDs)
    }

    /// Validates one record.
    ///
    /// - Parameters:
    ///   - record: The record as received.
    ///   - receivedAt: The time of processing, kept on the request.
    /// - Returns: The request, or the rejection of the first rule it breaks.
    public func validate(_ record: RequestRecord, receivedAt: Date = Date()) -> Result<NotificationRequest, Rejection> {
        do throws(Rejection) {
            return .success(try check(record, headers: RequestHeaders(record.headers), receivedAt: receivedAt))
        } catch {
            return .failure(error)
        }
    }

    /// What ``validateAny(_:receivedAt:)`` made of a record.
    public enum Validated: Sendable {
        /// A valid device request (sections 1 and 2).
        case request(NotificationRequest)
        /// A broadcast request that passed checks 1 to 6 of section 15.
        case broadcast(BroadcastRequest)
        /// An invalid device request.
        case rejectedRequest(Rejection)
        /// An invalid broadcast request.
        case rejectedBroadcast(Rejection)
    }

    /// Validates a device request or, when it has an `apns-channel-id` header, a broadcast request
    /// (section 15), reading the headers once.
    public func validateAny(_ record: RequestRecord, receivedAt: Date = Date()) -> Validated {
        let headers = RequestHeaders(record.headers)
        if headers.channelID != nil {
            do throws(Rejection) {
                return .broadcast(try checkBroadcast(record, headers: headers, receivedAt: receivedAt))
            } catch {
                return .rejectedBroadcast(error)
            }
        }
        do throws(Rejection) {
            return .request(try check(record, headers: headers, receivedAt: receivedAt))
        } catch {
            return .rejectedRequest(error)
        }
    }

    /// The checks, in order.
    private func check(_ record: RequestRecord, headers: RequestHeaders, receivedAt: Date) throws(Rejection) -> NotificationRequest {
        // 0. No apns-* header is repeated.
        if let repeated = headers.repeatedAPNSHeader {
            throw Rejection(
                .duplicateHeaders,
                "The header \(MessageText.quote(repeated)) is repeated; APNs refuses a request whose apns-* headers appear more than once.")
        }
        // 1. The device token.
        let deviceToken = try Self.deviceToken(record.key)

        // 2. The topic is present.
        guard let topicBytes = headers.topic, !topicBytes.isEmpty else {
            throw Rejection(.missingTopic, "The apns-topic header is missing or empty.")
        }

        // 3. Header formats, in order.
        var givenPushType: PushType?
        if let value = headers.pushType {
            guard let pushType = value.withUnsafeBufferPointer(PushType.init(utf8:)) else {
                throw Rejection(
                    .invalidPushType,
                    "The apns-push-type header \(MessageText.quote(bytes: value)) is not one of alert, background, voip, complication, fileprovider, location, liveactivity, pushtotalk, widgets, controls or mdm."
                )
            }
            givenPushType = pushType
        }
        var apnsID: MessageID?
        if let value = headers.apnsID {
            guard let given = MessageID(text: value) else {
                throw Rejection(
                    .badMessageId,
                    "The apns-id header \(MessageText.quote(bytes: value)) is not a UUID of the form 8-4-4-4-12 hexadecimal digits."
                )
            }
            apnsID = given
        }
        var givenPriority: Priority?
        if let value = headers.priority {
            guard let priority = Self.priority(value) else {
                throw Rejection(.badPriority, "The apns-priority header \(MessageText.quote(bytes: value)) is not 10, 5 or 1.")
            }
            givenPriority = priority
        }
        var expiration: Int64?
        var expirationIsZero = false
        if let value = headers.expiration {
            guard let seconds = Self.unsignedInteger(value) else {
                throw Rejection(
                    .badExpirationDate,
                    "The apns-expiration header \(MessageText.quote(bytes: value)) is not a non-negative integer of UNIX seconds."
                )
            }
            expiration = seconds == 0 ? nil : seconds
            expirationIsZero = seconds == 0
        }
        var collapseID: String?
        if let value = headers.collapseID, !value.isEmpty {
            guard value.count <= 64 else {
                throw Rejection(
                    .badCollapseId,
                    "The apns-collapse-id header \(MessageText.quote(bytes: value)) has \(value.count) bytes, more than 64."
                )
            }
            guard let text = value.withUnsafeBufferPointer(UTF8Check.string) else {
                throw Rejection(.badCollapseId, "The apns-collapse-id header \(MessageText.quote(bytes: value)) is not valid UTF-8.")
            }
            collapseID = text
        }
        let appState = try headers.appState.map(Self.appState)

        // 4. The payload.
        let payload = try payload(record.value, limit: (givenPushType ?? .alert).payloadLimit(profile: profile), pushType: givenPushType)

        // 5. Push type and priority.
        let pushType = givenPushType ?? Self.inferredPushType(payload)
        let priority = givenPriority ?? (pushType == .background ? .conserve : .immediate)
        if pushType == .background, priority == .immediate {
            throw Rejection(
                .badPriority,
                "The apns-priority header \"10\" is not allowed for the push type background\(givenPushType == nil ? " (inferred)" : ""); use 5 or 1.",
                check: .backgroundPriority
            )
        }
        if pushType == .liveactivity, priority == .low {
            throw Rejection(
                .badPriority, "The apns-priority header \"1\" is not allowed for the push type liveactivity; use 10 or 5.",
                check: .liveActivityPriority)
        }

        // 6. Topic suffix, then the allowed bundle IDs.
        let (topic, bundleID) = try topicAndBundleID(topicBytes, pushType: pushType)

        var request = NotificationRequest(
            deviceToken: deviceToken,
            topic: topic,
            bundleID: bundleID,
            pushType: pushType,
            pushTypeWasGiven: givenPushType != nil,
            priority: priority,
            apnsID: apnsID ?? MessageID.derived(for: record.source),
            apnsIDWasGiven: apnsID != nil,
            expiration: expiration,
            collapseID: collapseID,
            appStateOverride: appState,
            traceparent: headers.traceparent,
            headers: record.headers,
            payload: payload,
            source: record.source,
            receivedAt: receivedAt
        )
        request.expirationIsZero = expirationIsZero
        return request
    }

    /// The topic and its bundle ID (check 6): a configured app's topic from the table, any other
    /// through the rules, which word the rejection.
    private func topicAndBundleID(_ topicBytes: RecordBytes, pushType: PushType) throws(Rejection) -> (topic: String, bundleID: String) {
        if let known = knownTopics.lookUp(topicBytes, pushType: pushType) { return (known.topic, known.bundleID) }
        guard let topic = topicBytes.withUnsafeBufferPointer(UTF8Check.string) else {
            throw Rejection(.badTopic, "The apns-topic header \(MessageText.quote(bytes: topicBytes)) is not valid UTF-8.")
        }
        let bundleID = try Self.bundleID(topic: topic, pushType: pushType)
        if pushType != .mdm { try Self.requireAllowed(bundleID, topic: topic, allowed: allowedBundleIDs) }
        return (topic, bundleID)
    }
}
