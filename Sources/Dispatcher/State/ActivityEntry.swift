package import Records
package import JSON

/// One entry of the activities table (SEMANTICS section 11.2): a Live Activity as the dispatcher
/// knows it. `bundleId`, `status` and `timestamp` are required; every other field is null when absent.
package struct ActivityEntry: Sendable, Hashable {
    /// `status`: whether the activity has ended.
    package enum Status: String, Sendable, Hashable, CaseIterable {
        /// Started and not ended.
        case active
        /// Ended (section 14.3 row 9); it may still show until its dismissal date.
        case ended
    }

    /// `bundleId`: the app the activity belongs to.
    package var bundleID: String
    /// `status`.
    package var status: Status
    /// `timestamp`: the `aps.timestamp` of the last push applied, in UNIX seconds.
    package var timestamp: Int64
    /// `attributesType`.
    package var attributesType: String?
    /// `attributes`.
    package var attributes: JSONObject?
    /// `contentState`.
    package var contentState: JSONObject?
    /// `staleDate`, UNIX seconds.
    package var staleDate: Int64?
    /// `dismissalDate`, UNIX seconds (set when the activity ends, section 14.4).
    package var dismissalDate: Int64?
    /// `relevanceScore`, as written.
    package var relevanceScore: JSONNumber?
    /// `channelId`: the broadcast channel the activity is subscribed to (section 15).
    package var channelID: String?

    /// An entry of the three required fields, the others null.
    package init(bundleID: String, status: Status, timestamp: Int64) {
        self.bundleID = bundleID
        self.status = status
        self.timestamp = timestamp
    }

    /// The activity's state at `now` (UNIX seconds, rounded down), section 14.4: `dismissed`,
    /// `ended`, `stale` or `active`.
    package func state(at now: Int64) -> ActivityState {
        if status == .ended {
            if let dismissalDate, dismissalDate <= now { return .dismissed }
            return .ended
        }
        if let staleDate, staleDate <= now { return .stale }
        return .active
    }

    /// Whether the activity is dismissed at `now` (UNIX seconds).
    package func isDismissed(at now: Int64) -> Bool { state(at: now) == .dismissed }
}

/// The state of a Live Activity at a time (SEMANTICS section 14.4).
public enum ActivityState: String, Sendable, Hashable, CaseIterable {
    /// Ended, and its dismissal date has passed: no longer shown.
    case dismissed
    /// Ended, still shown until its dismissal date.
    case ended
    /// Active, past its stale date.
    case stale
    /// Active.
    case active
}

extension ActivityEntry {
    /// Reads an activities record's value (section 11.2).
    /// - Throws: ``StateRecordError`` naming the field that is wrong, never quoting the value.
    package init(parsing value: RecordBytes) throws(StateRecordError) {
        guard let object = (try? JSONValue(parsing: value))?.objectValue else { throw StateRecordError("the value is not a JSON object") }
        func field(_ name: String) -> JSONValue? {
            guard let value = object[name], !value.isNull else { return nil }
            return value
        }
        guard let bundleID = field("bundleId")?.stringValue else { throw StateRecordError("bundleId is missing or not a string") }
        guard let text = field("status")?.stringValue, let status = Status(rawValue: text) else {
            throw StateRecordError("status is missing or not active or ended")
        }
        guard let timestamp = field("timestamp").flatMap(Self.integer) else {
            throw StateRecordError("timestamp is missing or not an integer of seconds")
        }
        self.init(bundleID: bundleID, status: status, timestamp: timestamp)
        if let value = field("attributesType") {
            guard let text = value.stringValue else { throw StateRecordError("attributesType is not a string") }
            attributesType = text
        }
        if let value = field("attributes") {
            guard let object = value.objectValue else { throw StateRecordError("attributes is not an object") }
            attributes = object
        }
        if let value = field("contentState") {
            guard let object = value.objectValue else { throw StateRecordError("contentState is not an object") }
            contentState = object
        }
        if let value = field("staleDate") {
            guard let seconds = Self.integer(value) else { throw StateRecordError("staleDate is not an integer of seconds") }
            staleDate = seconds
        }
        if let value = field("dismissalDate") {
            guard let seconds = Self.integer(value) else { throw StateRecordError("dismissalDate is not an integer of seconds") }
            dismissalDate = seconds
        }
        if let value = field("relevanceScore") {
            guard let number = value.numberValue else { throw StateRecordError("relevanceScore is not a number") }
            relevanceScore = number
        }
        if let value = field("channelId") {
            guard let text = value.stringValue else { throw StateRecordError("channelId is not a string") }
            channelID = text
        }
    }

    /// A JSON integer that fits 64 bits, nil otherwise.
    static func integer(_ value: JSONValue) -> Int64? {
        guard let number = value.numberValue, number.isInteger else { return nil }
        return Int64(number.text)
    }

    /// The record's value, every field present (null when absent), in the order of section 11.2.
    package var json: JSONObject {
        JSONObject([
            ("bundleId", .string(bundleID)),
            ("status", .string(status.rawValue)),
            ("timestamp", .number(JSONNumber(Int(timestamp)))),
            ("attributesType", attributesType.map(JSONValue.string) ?? .null),
            ("attributes", attributes.map(JSONValue.object) ?? .null),
            ("contentState", contentState.map(JSONValue.object) ?? .null),
            ("staleDate", staleDate.map { .number(JSONNumber(Int($0))) } ?? .null),
            ("dismissalDate", dismissalDate.map { .number(JSONNumber(Int($0))) } ?? .null),
            ("relevanceScore", relevanceScore.map(JSONValue.number) ?? .null),
            ("channelId", channelID.map(JSONValue.string) ?? .null),
        ])
    }

    /// The record's value as bytes.
    package var bytes: [UInt8] { JSONValue.object(json).serialized() }
}
