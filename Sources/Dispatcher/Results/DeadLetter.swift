public import Foundation
public import Notifications

/// An invalid request, kept as it came with the reason it was refused.
public struct DeadLetter: Sendable {
    /// The request exactly as received.
    public var record: RequestRecord
    /// Why it was refused.
    public var rejection: Rejection
    /// When it was refused.
    public var failedAt: Date
    /// The consumer group that refused it (`dlq-consumer-group`).
    public var consumerGroup: String
    /// The `apns-id` added when the request has none; nil derives it from the record's source
    /// (section 1). A broadcast's is its `apns-request-id` as given (section 15).
    public var addedMessageID: String? = nil

    /// A dead letter of `record`, refused for `rejection` at `failedAt` by `consumerGroup`.
    package init(record: RequestRecord, rejection: Rejection, failedAt: Date, consumerGroup: String) {
        self.record = record
        self.rejection = rejection
        self.failedAt = failedAt
        self.consumerGroup = consumerGroup
    }
}
