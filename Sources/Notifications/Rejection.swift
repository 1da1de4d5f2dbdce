/// A refused request: the APNs reason, its status and a sentence for a person naming the field and value.
public struct Rejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the request was refused.
    public let reason: RejectionReason
    /// The HTTP status (the reason's).
    public var status: Int
    /// A sentence naming the offending field and its (possibly truncated) value.
    public let detail: String

    /// Makes a rejection with the reason's status.
    public init(_ reason: RejectionReason, _ detail: String) {
        self.reason = reason
        self.status = reason.status
        self.detail = detail
    }

    /// The reason, status and detail.
    public var description: String { "\(reason.rawValue) (\(status)): \(detail)" }
}
