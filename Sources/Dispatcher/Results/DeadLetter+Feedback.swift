import Foundation
import Notifications
import Records

extension DeadLetter {
    /// The feedback record that follows this dead letter (SEMANTICS section 12.2), nil unless its
    /// reason is one of the token reasons (`BadDeviceToken`, `DeviceTokenNotForTopic`,
    /// `Unregistered`, `ExpiredToken`): ``writeFeedback(_:reason:status:timestamp:reportedAt:limit:into:)``
    /// on a view of the record, the writer of every feedback record.
    func feedbackRecord(topic: String, limit: OutputLimit) -> OutputRecord? {
        guard rejection.reason.reportsTokenFeedback else { return nil }
        var output = OutputBuffer()
        return record.withView { view in
            Self.writeFeedback(
                view, reason: rejection.reason, status: rejection.status, timestamp: rejection.timestamp, reportedAt: failedAt, limit: limit,
                into: &output)
            return output.outputRecord(of: view, topic: topic)
        }
    }
}
