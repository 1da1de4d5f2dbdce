import Foundation
import Notifications

extension Dispatcher {
    /// The token checks of SEMANTICS section 12.1 for a request of `pushType` to `bundleID`, on
    /// the devices-table entry of its token (a token without an entry passes): the environment,
    /// the app, then the token's state.
    func tokenRejection(pushType: PushType, bundleID requested: @autoclosure () -> String, device: DeviceEntry?) -> Rejection? {
        guard let device else { return nil }
        let environment = configuration.dispatch.environment
        if let tokenEnvironment = device.environment, tokenEnvironment != environment {
            return Rejection(
                .badDeviceToken,
                "The device token belongs to the \(tokenEnvironment.rawValue) environment (devices table), but the dispatcher stands for \(environment.rawValue) (dispatch.environment).",
                check: .tokenState)
        }
        if pushType != .mdm, let bundleID = device.bundleID {
            let requested = requested()
            if bundleID != requested {
                return Rejection(
                    .deviceTokenNotForTopic,
                    "The device token belongs to the app \(MessageText.quote(bundleID)) (devices table), not to \(MessageText.quote(requested)) of the apns-topic header.")
            }
        }
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
