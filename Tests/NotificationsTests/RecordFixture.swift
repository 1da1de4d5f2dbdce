import Foundation
import Notifications
import Records

/// Builds request records for tests: a valid alert request unless told otherwise.
struct RecordFixture {
    static let token = String(repeating: "0123456789ABCDEF", count: 4)
    static let source = TopicPartitionOffset(topic: "notifications.requests", partition: 2, offset: 41)

    var key: String? = RecordFixture.token
    var headers: [(String, String?)] = [("apns-topic", "com.example.app")]
    var value: String? = #"{"aps":{"alert":"Hello"}}"#

    /// The fixture with `name` set (replacing a header of the same name) or removed when nil.
    func with(_ name: String, _ value: String?) -> RecordFixture {
        var copy = self
        copy.headers.removeAll { $0.0 == name }
        if let value { copy.headers.append((name, value)) }
        return copy
    }

    /// The fixture with one more header, after the others (a repeat when the name is there already).
    func appending(_ name: String, _ value: String?) -> RecordFixture {
        var copy = self
        copy.headers.append((name, value))
        return copy
    }

    /// The fixture with another payload.
    func payload(_ value: String?) -> RecordFixture {
        var copy = self
        copy.value = value
        return copy
    }

    /// The fixture with another key.
    func key(_ key: String?) -> RecordFixture {
        var copy = self
        copy.key = key
        return copy
    }

    var record: RequestRecord {
        RequestRecord(
            key: key.map { Array($0.utf8) },
            headers: headers.map { RecordHeader(name: $0.0, value: $0.1.map { Array($0.utf8) }) },
            value: value.map { Array($0.utf8) },
            source: RecordFixture.source
        )
    }

    func validate(_ validator: RequestValidator = RequestValidator()) -> Result<NotificationRequest, Rejection> {
        validator.validate(record)
    }

    /// The rejection, or nil when the record is valid.
    func rejection(_ validator: RequestValidator = RequestValidator()) -> Rejection? {
        if case .failure(let rejection) = validate(validator) { return rejection }
        return nil
    }
}

/// A payload of exactly `size` bytes: an alert with padding in a custom key.
func payloadOfSize(_ size: Int) -> String {
    let skeleton = #"{"aps":{"alert":"x"},"pad":""}"#
    return #"{"aps":{"alert":"x"},"pad":""# + String(repeating: "p", count: size - skeleton.utf8.count) + #""}"#
}
