import Foundation
import Notifications
import Records

extension Dispatcher {
    /// The token checks of SEMANTICS section 12.1 for a valid request, on the devices-table entry
    /// of its token (a token without an entry has none to pass): the environment, the app, then
    /// the token's state.
    ///
    /// The request and its record are passed as they are, not the requested bundle ID in an
    /// autoclosure: the closure's context copied the dispatcher, the validated request and the
    /// record's view for every request whose token has an entry. The bundle IDs are compared as
    /// bytes; the requested one is made a string only when they differ.
    func tokenRejection(of request: ValidatedRequest, in record: borrowing RecordView, device: DeviceEntry) -> Rejection? {
        let environment = configuration.dispatch.environment
        if let tokenEnvironment = device.environment, tokenEnvironment != environment {
            return Rejection(
                .badDeviceToken,
                "The device token belongs to the \(tokenEnvironment.rawValue) environment (devices table), but the dispatcher stands for \(environment.rawValue) (dispatch.environment).",
                check: .tokenState)
        }
        // Equal bytes are equal strings; other bytes may still be (canonically equivalent
        // Unicode), so the strings decide.
        if request.pushType != .mdm, let bundleID = device.bundleID,
            !withBundleID(of: request, in: record, { $0.elementsEqual(bundleID.utf8) })
        {
            let requested = self.bundleID(of: request, in: record)
            guard requested != bundleID else { return tokenStateRejection(device) }
            return Rejection(
                .deviceTokenNotForTopic,
                "The device token belongs to the app \(MessageText.quote(bundleID)) (devices table), not to \(MessageText.quote(requested)) of the apns-topic header.")
        }
        return tokenStateRejection(device)
    }

    /// The token's state check, the last of section 12.1.
    private func tokenStateRejection(_ device: DeviceEntry) -> Rejection? {
        switch device.token {
        case .active:
            return nil
        case .unregistered:
            var rejection = Rejection(
                .unregistered,
                "The device token is no longer registered for the topic (devices table: token unregistered since \(device.since ?? 0) ms).")
            rejection.timestamp = device.since
            return rejection
        case .expired:
            var rejection = Rejection(
                .expiredToken, "The device token has expired (devices table: token expired since \(device.since ?? 0) ms).")
            rejection.timestamp = device.since
            return rejection
        }
    }
}
