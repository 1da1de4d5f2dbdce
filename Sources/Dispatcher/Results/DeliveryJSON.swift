import Notifications

/// The JSON values of delivery and launch records (SEMANTICS section 5), fields in the documented order.
enum DeliveryJSON {
    /// The delivery record's value.
    static func delivery(_ delivery: Delivery) -> JSONObject {
        let request = delivery.request
        return JSONObject([
            ("apnsId", .string(request.apnsID)),
            ("deviceToken", .string(request.deviceToken)),
            ("bundleId", .string(request.bundleID)),
            ("pushType", .string(request.pushType.rawValue)),
            ("priority", .number(JSONNumber(request.priority.rawValue))),
            ("collapseId", request.collapseID.map(JSONValue.string) ?? .null),
            ("disposition", .string(delivery.disposition.rawValue)),
            ("reason", .string(delivery.reason.rawValue)),
            ("payload", .object(delivery.content.payload.json)),
            ("attachments", .array(delivery.content.attachments.map(JSONValue.object))),
            ("extension", delivery.extensionReport.map(extensionReport) ?? .null),
            ("presentation", delivery.presentation.map(presentation) ?? .null),
            ("badgeEffect", .string(delivery.badgeEffect.rawValue)),
            ("appState", .string(delivery.appState.rawValue)),
            ("appCallback", delivery.appCallback.map { .string($0.rawValue) } ?? .null),
            ("receivedAt", .string(Timestamp.rfc3339(request.receivedAt))),
            ("deliveredAt", .string(Timestamp.rfc3339(delivery.deliveredAt))),
        ])
    }

    /// The launch record's value.
    static func launch(_ delivery: Delivery, trigger: LaunchTrigger) -> JSONObject {
        let request = delivery.request
        return JSONObject([
            ("apnsId", .string(request.apnsID)),
            ("deviceToken", .string(request.deviceToken)),
            ("bundleId", .string(request.bundleID)),
            ("trigger", .string(trigger.rawValue)),
            ("launchOptions", .object(JSONObject([("remoteNotification", .object(delivery.content.payload.json))]))),
        ])
    }

    private static func extensionReport(_ report: ExtensionReport) -> JSONValue {
        .object(
            JSONObject([
                ("name", .string(report.name)),
                ("category", report.category.map(JSONValue.string) ?? .null),
                ("elapsedMs", .number(JSONNumber(Int(report.elapsedMilliseconds)))),
                ("expired", .bool(report.expired)),
            ]))
    }

    private static func presentation(_ presentation: Presentation) -> JSONValue {
        .object(
            JSONObject([
                ("contentExtension", .string(presentation.contentExtension)),
                ("initialContentSizeRatio", .number(JSONNumber(presentation.initialContentSizeRatio))),
                ("defaultContentHidden", .bool(presentation.defaultContentHidden)),
                ("overridesDefaultTitle", .bool(presentation.overridesDefaultTitle)),
                ("userInteractionEnabled", .bool(presentation.userInteractionEnabled)),
            ]))
    }
}
