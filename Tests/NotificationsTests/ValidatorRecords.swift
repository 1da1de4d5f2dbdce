import Notifications
import Records
import TestSupport

/// The records of the validator's tests: ``TestRecord``s keyed by a token in both cases, from a
/// position other than the first, checked by a ``RequestValidator``.
extension TestRecord {
    /// The device token the validator's tests send: hexadecimal in upper and lower case (a request's
    /// token is its key lowercased).
    static let mixedCaseToken = String(repeating: "0123456789ABCDEF", count: 4)

    /// Where the validator's tests' records are read from: not offset 0 of partition 0 (a derived
    /// apns-id is made from the position).
    static let validatorSource = TopicPartitionOffset(topic: requestsTopic, partition: 2, offset: 41)

    /// A valid alert request (``alertPayload``) with `headers`, keyed by ``mixedCaseToken``, from
    /// ``validatorSource``: what the validator's tests start from.
    static func forValidator(headers: [(String, String)] = [("apns-topic", bundleID)]) -> TestRecord {
        TestRecord(
            token: mixedCaseToken, headers: headers, topic: validatorSource.topic, partition: validatorSource.partition,
            offset: validatorSource.offset)
    }

    /// The request `validator` makes of the record, or its rejection.
    func validate(_ validator: RequestValidator = RequestValidator()) -> Result<NotificationRequest, Rejection> {
        validator.validate(requestRecord)
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
