package import Records
public import Foundation
package import JSON

/// Turns a request record into a `NotificationRequest`, or a `Rejection` with the APNs reason.
///
/// The checks run in the order of SEMANTICS.md section 1; the first failure is the reason:
/// repeated `apns-*` headers, device token, topic present, header formats (push type, id, priority,
/// expiration, collapse id, app state), payload (empty, too large, invalid), background with
/// priority 10 or liveactivity with priority 1, topic suffix and allowed bundle IDs. The checks
/// that read state tables (token checks, 429: section 12) are the dispatcher's.
///
/// One set of checks, on a record lent in place (``RecordView``): a consumed message is validated
/// where librdkafka keeps it (``validateInPlace(_:)``), an owned record through a view of itself
/// (``validate(_:receivedAt:)``), which then copies what the request keeps. A payload is scanned
/// where it lies; only one the scanner leaves alone (an `mdm` payload, a Live Activity's loc
/// objects, repeated or escaped keys, an object of many keys, or invalid JSON, whose error the
/// parser words) is parsed, and its tree is dropped once its traits are read.
public struct RequestValidator: Sendable {
    /// Whose rules apply; decides the size limit.
    public let profile: Profile
    /// The bundle IDs configured under `apps`; empty allows every topic.
    public let allowedBundleIDs: Set<String>
    /// Their topics, so that a request for a configured app decodes neither its topic nor its bundle ID.
    package let knownTopics: KnownTopics

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
            return .success(try request(record, receivedAt: receivedAt))
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
            return .request(try request(record, receivedAt: receivedAt))
        } catch {
            return .rejectedRequest(error)
        }
    }

    /// What ``validateInPlace(_:)`` made of a record lent in place.
    package enum InPlace: Sendable {
        /// A valid device request, described by where its parts are in the record.
        case request(ValidatedRequest)
        /// An invalid device request.
        case rejected(Rejection)
        /// A broadcast request (it has an `apns-channel-id` header): a fan-out, validated with
        /// ``validateAny(_:receivedAt:)`` on the copy the fan-out keeps.
        case broadcast
    }

    /// Validates a device request where it lies: no byte of it is copied and nothing is
    /// allocated for a valid request whose payload the scanner reads (nearly all of them).
    package func validateInPlace(_ record: borrowing RecordView) -> InPlace {
        var whitespace = WhitespaceRuns.none
        return validateInPlace(record, recording: &whitespace)
    }

    /// ``validateInPlace(_:)`` that notes where the payload's whitespace lies (``WhitespaceRuns``),
    /// for the delivery's writer to drop it with a copy per run.
    package func validateInPlace(_ record: borrowing RecordView, recording whitespace: inout WhitespaceRuns) -> InPlace {
        let lent = RequestHeaders.positions(of: record)
        if lent.positions.channelID != nil { return .broadcast }
        do throws(Rejection) {
            return .request(try check(record, positions: lent.positions, repeated: lent.repeated, whitespace: &whitespace))
        } catch {
            return .rejected(error)
        }
    }

    /// Validates an owned record through a view of itself, then copies what the request keeps.
    private func request(_ record: RequestRecord, receivedAt: Date) throws(Rejection) -> NotificationRequest {
        let validated = try record.withView { (view) throws(Rejection) -> ValidatedRequest in
            let lent = RequestHeaders.positions(of: view)
            var whitespace = WhitespaceRuns.none
            return try check(view, positions: lent.positions, repeated: lent.repeated, whitespace: &whitespace)
        }
        return validated.request(of: record, topics: knownTopics, receivedAt: receivedAt)
    }

    /// The checks, in order.
    /// - Parameters:
    ///   - positions: where the headers the rules read are (``RequestHeaders/positions(of:)``).
    ///   - repeated: the first repeated `apns-*` header name, if any.
    ///   - whitespace: where the payload's whitespace is noted (``WhitespaceRuns``).
    private func check(
        _ record: borrowing RecordView, positions: RequestHeaders.Positions, repeated: String?, whitespace: inout WhitespaceRuns
    ) throws(Rejection) -> ValidatedRequest {
        // 0. No apns-* header is repeated.
        if let repeated {
            throw Rejection(
                .duplicateHeaders,
                "The header \(MessageText.quote(repeated)) is repeated; APNs refuses a request whose apns-* headers appear more than once.")
        }
        // 1. The device token.
        try record.withUnsafeKeyBytes { (key) throws(Rejection) in try DeviceToken.check(key) }

        // 2. The topic is present.
        guard let topicPosition = positions.topic,
            record.withUnsafeHeaderBytes(topicPosition, { _, value in value.map { !$0.isEmpty } ?? false })
        else {
            throw Rejection(.missingTopic, "The apns-topic header is missing or empty.")
        }

        // 3. Header formats, in order.
        var givenPushType: PushType?
        if let position = positions.pushType {
            givenPushType = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> PushType in
                let value = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
                guard let pushType = PushType(utf8: value.assumingMemoryBound(to: UInt8.self)) else {
                    throw Rejection(
                        .invalidPushType,
                        "The apns-push-type header \(MessageText.quote(bytes: value)) is not one of alert, background, voip, complication, fileprovider, location, liveactivity, pushtotalk, widgets, controls or mdm."
                    )
                }
                return pushType
            }
        }
        var apnsID: MessageID?
        if let position = positions.apnsID {
            apnsID = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> MessageID in
                let value = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
                guard let given = MessageID(digits: value) else {
                    throw Rejection(
                        .badMessageId,
                        "The apns-id header \(MessageText.quote(bytes: value)) is not a UUID of the form 8-4-4-4-12 hexadecimal digits."
                    )
                }
                return given
            }
        }
        var givenPriority: Priority?
        if let position = positions.priority {
            givenPriority = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> Priority in
                let value = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
                guard let priority = Self.priority(value) else {
                    throw Rejection(.badPriority, "The apns-priority header \(MessageText.quote(bytes: value)) is not 10, 5 or 1.")
                }
                return priority
            }
        }
        var expiration: Int64?
        var expirationIsZero = false
        if let position = positions.expiration {
            let seconds = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> Int64 in
                let value = value ?? UnsafeRawBufferPointer(start: nil, count: 0)
                guard let seconds = Self.unsignedInteger(value) else {
                    throw Rejection(
                        .badExpirationDate,
                        "The apns-expiration header \(MessageText.quote(bytes: value)) is not a non-negative integer of UNIX seconds."
                    )
                }
                return seconds
            }
            expiration = seconds == 0 ? nil : seconds
            expirationIsZero = seconds == 0
        }
        var collapseID: Int?
        if let position = positions.collapseID {
            collapseID = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> Int? in
                guard let value, !value.isEmpty else { return nil }
                guard value.count <= 64 else {
                    throw Rejection(
                        .badCollapseId,
                        "The apns-collapse-id header \(MessageText.quote(bytes: value)) has \(value.count) bytes, more than 64."
                    )
                }
                guard UTF8Check.isValid(value.assumingMemoryBound(to: UInt8.self)) else {
                    throw Rejection(.badCollapseId, "The apns-collapse-id header \(MessageText.quote(bytes: value)) is not valid UTF-8.")
                }
                return position
            }
        }
        var appState: AppState?
        if let position = positions.appState {
            appState = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> AppState in
                try Self.appState(value ?? UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }
        var badgeIncrement: Int?
        if let position = positions.badgeIncrement {
            badgeIncrement = try record.withUnsafeHeaderBytes(position) { (_, value) throws(Rejection) -> Int in
                try Self.badgeIncrement(value ?? UnsafeRawBufferPointer(start: nil, count: 0))
            }
        }

        // 4. The payload.
        let limit = (givenPushType ?? .alert).payloadLimit(profile: profile)
        let payload = try record.withUnsafeValueBytes { (value) throws(Rejection) -> ValidatedRequest.PayloadCheck in
            try checkPayload(value, limit: limit, pushType: givenPushType, whitespace: &whitespace)
        }

        // 5. Push type and priority.
        let pushType = givenPushType ?? Self.inferredPushType(payload.traits)
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
        let topic = try record.withUnsafeHeaderBytes(topicPosition) { (_, value) throws(Rejection) -> ValidatedRequest.Topic in
            try checkTopic(value!, pushType: pushType)
        }

        return ValidatedRequest(
            pushType: pushType, pushTypeWasGiven: givenPushType != nil, priority: priority,
            apnsID: apnsID ?? record.withUnsafeTopicBytes { MessageID.derived(topicBytes: $0, partition: record.partition, offset: record.offset) },
            apnsIDWasGiven: apnsID != nil, expiration: expiration, expirationIsZero: expirationIsZero,
            appStateOverride: appState, topic: topic, topicHeader: topicPosition, collapseIDHeader: collapseID,
            traceparentHeader: positions.traceparent, badgeIncrement: badgeIncrement, payload: payload)
    }

    /// Check 4: the payload is there, within its limit, and valid (scanned in place; the parser
    /// decides what the scanner leaves alone).
    private func checkPayload(
        _ value: UnsafeRawBufferPointer?, limit: Int, pushType: PushType?, whitespace: inout WhitespaceRuns
    ) throws(Rejection) -> ValidatedRequest.PayloadCheck {
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
        var traits = Payload.Traits()
        if pushType != .mdm, let isCompact = Payload.scan(value.assumingMemoryBound(to: UInt8.self), into: &traits, recording: &whitespace) {
            return ValidatedRequest.PayloadCheck(traits: traits, form: isCompact ? .compact : .plain)
        }
        // What the scanner leaves alone the parser decides, in its words when it refuses; only
        // the traits are kept of the tree, and the payload goes on as its bytes (written
        // compactly from them wherever it goes).
        let payload = try treePayload(value.assumingMemoryBound(to: UInt8.self), limit: limit, pushType: pushType)
        return ValidatedRequest.PayloadCheck(traits: payload.storage.traits, form: .general)
    }

    /// Check 6: the topic and its bundle ID: a configured app's topic from the table, any other
    /// through the rules, which word the rejection.
    private func checkTopic(_ bytes: UnsafeRawBufferPointer, pushType: PushType) throws(Rejection) -> ValidatedRequest.Topic {
        if let known = knownTopics.lookUp(bytes, pushType: pushType) { return .known(known) }
        guard let topic = UTF8Check.string(bytes.assumingMemoryBound(to: UInt8.self)) else {
            throw Rejection(.badTopic, "The apns-topic header \(MessageText.quote(bytes: bytes)) is not valid UTF-8.")
        }
        let bundleID = try Self.bundleID(topic: topic, pushType: pushType)
        if pushType != .mdm { try Self.requireAllowed(bundleID, topic: topic, allowed: allowedBundleIDs) }
        return .given(bundleIDLength: bundleID.utf8.count)
    }

    /// The rejection of a payload that is not JSON, with where the parser stopped.
    private static func notJSON(_ error: JSONParseError) -> Rejection {
        Rejection(.invalidPayload, "The payload (the record value) is not valid JSON: \(error.message) at byte \(error.offset).")
    }

    /// The payload validated on its tree (the scanner left it alone).
    private func treePayload(_ value: UnsafeBufferPointer<UInt8>, limit: Int, pushType: PushType?) throws(Rejection) -> Payload {
        let json: JSONValue
        do throws(JSONParseError) {
            json = try JSONValue(parsing: value, maxDepth: JSONValue.maximumDepth, knownKeys: PayloadKey.knownName)
        } catch {
            throw Self.notJSON(error)
        }
        do throws(PayloadError) {
            return try Payload(validating: json, pushType: pushType, profile: profile)
        } catch {
            throw Rejection(.invalidPayload, error.message)
        }
    }
}
