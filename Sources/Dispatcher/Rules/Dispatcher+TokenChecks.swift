import Foundation
import Notifications

extension Dispatcher {
    /// The token checks of SEMANTICS section 12.1, on the devices-table entry of the request's
    /// token (a token without an entry passes): the environment, the app, then the token's state.
    func tokenRejection(_ request: NotificationRequest, device: DeviceEntry?) -> Rejection? {
        tokenRejection(pushType: request.pushType, bundleID: request.bundleID, device: device)
    }

    /// ``tokenRejection(_:device:)`` for a request of `pushType` to `bundleID`.
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

    /// `TooManyRequests` (section 12.3) when `dispatch.tooManyRequests` is set and the request's
    /// token already had the limit of accepted requests in the window; otherwise the request is
    /// counted as accepted. Not configured: nothing is counted, nothing is read.
    func rateRejection(_ request: NotificationRequest, tables: StateTables, now: Date) -> Rejection? {
        guard let rates = tables.requestRates else { return nil }
        let milliseconds = Int64((now.timeIntervalSince1970 * 1_000).rounded(.down))
        guard let count = rates.admit(request.deviceToken, now: milliseconds) else { return nil }
        let limit = rates.limit
        return Rejection(
            .tooManyRequests,
            "The device token already had \(count) accepted requests in the last \(DurationText.spell(limit.window)); dispatch.tooManyRequests allows \(limit.limit).")
    }
}
