import JSON
import Notifications

extension DeliveryJSON {
    /// The delivery record's value written straight into one buffer: the bytes
    /// `JSONValue.object(delivery(_:)).serialized()` gives, without building the tree first.
    ///
    /// The payload goes in as the bytes it came in when those are already compact (the usual case),
    /// so numbers keep their written form by construction (SEMANTICS section 2).
    static func deliveryBytes(_ delivery: Delivery) -> [UInt8] {
        let request = delivery.request
        let payload = delivery.content.payload
        // The fields besides the payload take 550-960 bytes (median 660 over Config/samples): room
        // for them all, so that the buffer is allocated once (growing it was 1.4 % of the
        // gate-only path's CPU, a copy of the whole delivery each time).
        var writer = JSONWriter(capacity: payload.byteCountHint + 1_024)
        writer.append(#"{"apnsId":"#)
        writer.write(messageID: request.apnsID)
        writer.append(#","deviceToken":"#)
        writer.write(string: request.deviceToken)
        writer.append(#","bundleId":"#)
        writer.write(string: request.bundleID)
        writer.append(#","pushType":"#)
        writer.write(string: request.pushType.rawValue)
        writer.append(#","priority":"#)
        writer.write(integer: request.priority.rawValue)
        writer.append(#","collapseId":"#)
        writer.write(stringOrNull: request.collapseID)
        writer.append(#","disposition":"#)
        writer.write(string: delivery.disposition.rawValue)
        writer.append(#","reason":"#)
        writer.write(string: delivery.reason.rawValue)
        writer.append(#","payload":"#)
        writer.write(payload: payload)
        writer.append(#","attachments":["#)
        let attachments = delivery.content.attachments
        for position in attachments.indices {
            if position > 0 { writer.append(",") }
            writer.write(object: attachments[position])
        }
        writer.append(#"],"extension":"#)
        if let report = delivery.extensionReport {
            write(report, to: &writer)
        } else {
            writer.append("null")
        }
        writer.append(#","presentation":"#)
        if let presentation = delivery.presentation {
            write(presentation, to: &writer)
        } else {
            writer.append("null")
        }
        writer.append(#","badgeEffect":"#)
        writer.write(string: delivery.badgeEffect.rawValue)
        writer.append(#","appState":"#)
        writer.write(string: delivery.appState.rawValue)
        writer.append(#","appCallback":"#)
        writer.write(stringOrNull: delivery.appCallback?.rawValue)
        writer.append(#","liveActivity":"#)
        if let report = delivery.liveActivity {
            writer.append(#"{"activityToken":"#)
            writer.write(string: report.activityToken)
            writer.append(#","event":"#)
            writer.write(stringOrNull: report.event?.rawValue)
            writer.append(#","result":"#)
            writer.write(string: report.result.rawValue)
            writer.append(#","state":"#)
            writer.write(stringOrNull: report.state?.rawValue)
            writer.append(#","alerted":"#)
            writer.append(report.alerted ? "true}" : "false}")
        } else {
            writer.append("null")
        }
        writer.append(#","channelId":"#)
        writer.write(stringOrNull: delivery.channelID)
        writer.append(#","widgetReload":"#)
        switch delivery.widgetReload {
        case nil: writer.append("null")
        case let reload?: writer.append(reload ? "true" : "false")
        }
        writer.append(#","userAlert":"#)
        if let alert = delivery.userAlert {
            write(alert, to: &writer)
        } else {
            writer.append("null")
        }
        // Timestamps need no escaping: their bytes go into the buffer as they are written.
        writer.append(#","receivedAt":""#)
        Timestamp.appendRFC3339(request.receivedAt, to: &writer.output)
        writer.append(#"","deliveredAt":""#)
        Timestamp.appendRFC3339(delivery.deliveredAt, to: &writer.output)
        writer.append(#""}"#)
        return writer.output
    }

    /// The launch record's value written straight into one buffer, as ``deliveryBytes(_:)`` is:
    /// the bytes of `launch(apnsID:deviceToken:bundleID:trigger:payload:)` serialised.
    static func launchBytes(
        apnsID: String, deviceToken: String, bundleID: String, trigger: LaunchTrigger, payload: Payload
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: payload.byteCountHint + 256)
        writer.append(#"{"apnsId":"#)
        writer.write(string: apnsID)
        writer.append(#","deviceToken":"#)
        writer.write(string: deviceToken)
        writer.append(#","bundleId":"#)
        writer.write(string: bundleID)
        writer.append(#","trigger":"#)
        writer.write(string: trigger.rawValue)
        writer.append(#","launchOptions":{"remoteNotification":"#)
        writer.write(payload: payload)
        writer.append("}}")
        return writer.output
    }

    /// `extension`: the fields of `extensionReport(_:)`, in its order.
    private static func write(_ report: ExtensionReport, to writer: inout JSONWriter) {
        writer.append(#"{"name":"#)
        writer.write(string: report.name)
        writer.append(#","category":"#)
        writer.write(stringOrNull: report.category)
        writer.append(#","elapsedMs":"#)
        writer.write(integer: Int(report.elapsedMilliseconds))
        writer.append(#","expired":"#)
        writer.append(report.expired ? "true" : "false")
        writer.append("}")
    }

    /// `userAlert`: the fields of `userAlert(_:)`, in its order, without building the tree (most
    /// alert deliveries have one).
    private static func write(_ alert: UserAlert, to writer: inout JSONWriter) {
        writer.append(#"{"interruptionLevel":"#)
        writer.write(string: alert.interruptionLevel.rawValue)
        writer.append(#","focus":"#)
        writer.write(string: alert.focus.rawValue)
        writer.append(#","willPresent":"#)
        writer.write(stringOrNull: alert.willPresentCalled ? UserAlert.willPresentMethod : nil)
        writer.append(#","options":"#)
        if let options = alert.options {
            writer.append("[")
            for (position, option) in options.enumerated() {
                if position > 0 { writer.append(",") }
                writer.write(string: option.rawValue)
            }
            writer.append("]")
        } else {
            writer.append("null")
        }
        writer.append(#","banner":"#)
        writer.append(alert.banner ? "true" : "false")
        writer.append(#","list":"#)
        writer.append(alert.list ? "true" : "false")
        writer.append(#","sound":"#)
        writer.append(alert.sound ? "true" : "false")
        writer.append("}")
    }

    /// `presentation`: the fields of `presentation(_:)`, in its order.
    private static func write(_ presentation: Presentation, to writer: inout JSONWriter) {
        writer.append(#"{"contentExtension":"#)
        writer.write(string: presentation.contentExtension)
        writer.append(#","initialContentSizeRatio":"#)
        writer.write(.number(JSONNumber(presentation.initialContentSizeRatio)))
        writer.append(#","defaultContentHidden":"#)
        writer.append(presentation.defaultContentHidden ? "true" : "false")
        writer.append(#","overridesDefaultTitle":"#)
        writer.append(presentation.overridesDefaultTitle ? "true" : "false")
        writer.append(#","userInteractionEnabled":"#)
        writer.append(presentation.userInteractionEnabled ? "true" : "false")
        if let button = presentation.mediaPlayPauseButtonType {
            writer.append(#","mediaPlayPauseButtonType":"#)
            writer.write(string: button.rawValue)
        }
        writer.append("}")
    }
}
