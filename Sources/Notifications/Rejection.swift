/// A refused request: the APNs reason, its status and a sentence for a person naming the field and value.
public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the request was refused.
    public let reason: RejectionReason
    /// The HTTP status (the reason's).
    public var status: Int
    /// A sentence naming the offending field and its (possibly truncated) value; at most
    /// ``maximumDetailBytes`` of UTF-8.
    public let detail: String
    /// The validation check that failed; nil for a reason no check gives (`OutputRejected`).
    public let check: ValidationCheck?
    /// For `Unregistered` and `ExpiredToken`: when the token stopped being valid, in milliseconds
    /// since the epoch (the devices entry's `since`), written as `dlq-timestamp` (section 12.1).
    public var timestamp: Int64? = nil

    /// The longest `detail`, in bytes of UTF-8: it travels as the `dlq-detail` header, whatever
    /// the input quoted in it.
    package static let maximumDetailBytes = 1_024

    /// Makes a rejection with the reason's status (or `status`), its detail cut to
    /// ``maximumDetailBytes``.
    /// - Parameter check: the check that failed, when the reason alone does not say
    ///   (``ValidationCheck/init(giving:)``).
    package init(_ reason: RejectionReason, _ detail: String, status: Int? = nil, check: ValidationCheck? = nil) {
        self.reason = reason
        self.status = status ?? reason.status
        self.detail = detail.prefix(utf8Bytes: Self.maximumDetailBytes)
        self.check = check ?? ValidationCheck(giving: reason)
    }

    /// The reason, status and detail.
    public var description: String { "\(reason.rawValue) (\(status)): \(detail)" }
}
