package import JSON
import Notifications

/// The JSON values of delivery and launch records (SEMANTICS section 5), fields in the documented order.
package enum DeliveryJSON {
    /// The delivery record's value.
    static func delivery(_ delivery: Delivery) -> JSONObject {
        let request = delivery.request
        return JSONObject([
            ("apnsId", .string(request.apnsID.description)),
            ("deviceToken", .string(request.deviceToken)),
            ("bundleId", .string(request.bundleID)),
            ("pushType", .string(request.pushType.rawValue)),
            ("priority", .number(JSONNumber(request.priority.rawValue))),
            ("collapseId", .string(orNull: request.collapseID)),
            ("disposition", .string(delivery.disposition.rawValue)),
            ("reason", .string(delivery.reason.rawValue)),
            ("payload", .object(delivery.content.payload.json)),
            ("attachments", .array(delivery.content.attachments.map(JSONValue.object))),
            ("extension", delivery.extensionReport.map(extensionReport) ?? .null),
            ("presentation", delivery.presentation.map(presentation) ?? .null),
            ("badgeEffect", .string(delivery.badgeEffect.rawValue)),
            ("badgeCount", delivery.badgeCount.map { .number(JSONNumber($0)) } ?? .null),
            ("appState", .string(delivery.appState.rawValue)),
            ("appCallback", .string(orNull: delivery.appCallback?.rawValue)),
            ("liveActivity", delivery.liveActivity.map(liveActivity) ?? .null),
            ("channelId", .string(orNull: delivery.channelID)),
            ("widgetReload", delivery.widgetReload.map(JSONValue.bool) ?? .null),
            ("userAlert", delivery.userAlert.map(userAlert) ?? .null),
            ("receivedAt", .string(Timestamp.rfc3339(request.receivedAt))),
            ("deliveredAt", .string(Timestamp.rfc3339(delivery.deliveredAt))),
        ])
    }

    /// The launch record's value, for a delivery (section 5) or a response (section 10).
    /// - Parameter payload: the payload as delivered, the launch options' `remoteNotification`.
    static func launch(
        apnsID: String, deviceToken: String, bundleID: String, trigger: LaunchTrigger, payload: Payload
    ) -> JSONObject {
        JSONObject([
            ("apnsId", .string(apnsID)),
            ("deviceToken", .string(deviceToken)),
            ("bundleId", .string(bundleID)),
            ("trigger", .string(trigger.rawValue)),
            ("launchOptions", .object(JSONObject([("remoteNotification", .object(payload.json))]))),
        ])
    }

    private static func extensionReport(_ report: ExtensionReport) -> JSONValue {
        .object(
            JSONObject([
                ("name", .string(report.name)),
                ("category", .string(orNull: report.category)),
                ("elapsedMs", .number(JSONNumber(Int(report.elapsedMilliseconds)))),
                ("expired", .bool(report.expired)),
            ]))
    }

    /// `liveActivity` (section 14.6), fields in the documented order.
    static func liveActivity(_ report: LiveActivityReport) -> JSONValue {
        .object(
            JSONObject([
                ("activityToken", .string(report.activityToken)),
                ("event", .string(orNull: report.event?.rawValue)),
                ("result", .string(report.result.rawValue)),
                ("state", .string(orNull: report.state?.rawValue)),
                ("alerted", .bool(report.alerted)),
            ]))
    }

    /// `userAlert` (section 17.2), fields in the documented order.
    package static func userAlert(_ alert: UserAlert) -> JSONValue {
        .object(
            JSONObject([
                ("interruptionLevel", .string(alert.interruptionLevel.rawValue)),
                ("focus", .string(alert.focus.rawValue)),
                ("willPresent", .string(orNull: alert.willPresentCalled ? UserAlert.willPresentMethod : nil)),
                ("options", alert.options.map { .array($0.map { .string($0.rawValue) }) } ?? .null),
                ("banner", .bool(alert.banner)),
                ("list", .bool(alert.list)),
                ("sound", .bool(alert.sound)),
            ]))
    }

    private static func presentation(_ presentation: Presentation) -> JSONValue {
        var object = JSONObject([
            ("contentExtension", .string(presentation.contentExtension)),
            ("initialContentSizeRatio", .number(JSONNumber(presentation.initialContentSizeRatio))),
            ("defaultContentHidden", .bool(presentation.defaultContentHidden)),
            ("overridesDefaultTitle", .bool(presentation.overridesDefaultTitle)),
            ("userInteractionEnabled", .bool(presentation.userInteractionEnabled)),
        ])
        // Only when the extension has a media button (SEMANTICS section 10).
        if let button = presentation.mediaPlayPauseButtonType {
            object["mediaPlayPauseButtonType"] = .string(button.rawValue)
        }
        return .object(object)
    }
}
