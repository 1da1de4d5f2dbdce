import Foundation
import JSON
import Notifications

extension DeliveryJSON {
    /// Where a delivery's or launch's value has its `apnsId`'s 36 characters: both start
    /// `{"apnsId":"`, so a record's `apns-id` header reuses those bytes.
    static let apnsIDText = 11..<(11 + MessageID.textLength)

    /// A delivery record's fields before its payload, read where they lie.
    struct Head {
        var apnsID: MessageID
        /// The token's hexadecimal digits.
        var deviceToken: UnsafeRawBufferPointer
        /// Whether the digits are written lowercase (a key as received), or as they are (an owned
        /// request's token, lowercase already).
        var foldsToken: Bool
        var bundleID: UnsafeBufferPointer<UInt8>
        var pushType: PushType
        var priority: Priority
        var collapseID: UnsafeBufferPointer<UInt8>?
        var disposition: Disposition
        var reason: DeliveryReason
    }

    /// A delivery record's fields after its payload.
    struct Tail {
        var attachments: [JSONObject]
        var extensionReport: ExtensionReport?
        var presentation: Presentation?
        var badgeEffect: BadgeEffect
        /// `badgeCount` (section 21.2): the ledger's count after the delivery; nil for an app
        /// without a ledger.
        var badgeCount: Int?
        var appState: AppState
        var appCallback: AppCallback?
        var liveActivity: LiveActivityReport?
        var channelID: String?
        var widgetReload: Bool?
        var userAlert: UserAlert?
        var receivedAt: Date
        var deliveredAt: Date
    }

    /// Where a delivery's payload comes from.
    enum PayloadSource {
        /// A request's own bytes where they lie, in the form the validator found them
        /// (compacted from the text unless compact already, with the whitespace runs the
        /// validation noted when it did), and the badge a ledger's increment writes into its
        /// `aps` (section 21.2), if any.
        case bytes(UnsafeBufferPointer<UInt8>?, JSONForm, whitespace: WhitespaceRuns = .none, insertedBadge: Int?)
        /// A payload value: its bytes when it has them, else its tree (content an extension made).
        case payload(Payload)
    }

    /// Writes a delivery record's value (SEMANTICS section 5, the fields in their documented
    /// order): every delivery, whether decided on a record's view or after an extension, a Live
    /// Activity command or a stored notification, is written by this function.
    static func write(
        _ head: Head, payload: PayloadSource, _ tail: Tail, to writer: inout JSONWriter, timestamps: inout Timestamp.Cache
    ) {
        writeHead(
            to: &writer, apnsID: head.apnsID, deviceToken: head.deviceToken, foldsToken: head.foldsToken, bundleID: head.bundleID,
            pushType: head.pushType, priority: head.priority, collapseID: head.collapseID, disposition: head.disposition,
            reason: head.reason)
        switch payload {
        case .bytes(let bytes, let form, let whitespace, let insertedBadge):
            let start = writer.count
            writer.appendCompact(json: bytes ?? UnsafeBufferPointer(start: nil, count: 0), form: form, whitespace: whitespace)
            if let insertedBadge { writer.insert(member: "badge", integer: insertedBadge, intoObject: "aps", writtenFrom: start) }
        case .payload(let payload):
            writer.write(payload: payload)
        }
        writeTail(
            to: &writer, attachments: tail.attachments, extensionReport: tail.extensionReport, presentation: tail.presentation,
            badgeEffect: tail.badgeEffect, badgeCount: tail.badgeCount, appState: tail.appState, appCallback: tail.appCallback,
            liveActivity: tail.liveActivity,
            channelID: tail.channelID, widgetReload: tail.widgetReload, userAlert: tail.userAlert, receivedAt: tail.receivedAt,
            deliveredAt: tail.deliveredAt, timestamps: &timestamps)
    }

    /// The delivery record's value of a decided ``Delivery`` (one that waited: on an extension, a
    /// Live Activity command, the stored table), written by ``write(_:payload:_:to:timestamps:)``.
    static func deliveryBytes(_ delivery: Delivery) -> [UInt8] {
        let request = delivery.request
        // The fields besides the payload take 550-960 bytes (median 660 over Config/samples): room
        // for them all, so that the buffer is allocated once (growing it was 1.4 % of the
        // gate-only path's CPU, a copy of the whole delivery each time).
        var writer = JSONWriter(capacity: request.payload.byteCountHint + 1_024)
        var timestamps = Timestamp.Cache()
        var deviceToken = request.deviceToken
        var bundleID = request.bundleID
        var collapseID = request.collapseID
        let tail = Tail(
            attachments: delivery.content.attachments, extensionReport: delivery.extensionReport, presentation: delivery.presentation,
            badgeEffect: delivery.badgeEffect, badgeCount: delivery.badgeCount, appState: delivery.appState,
            appCallback: delivery.appCallback,
            liveActivity: delivery.liveActivity, channelID: delivery.channelID, widgetReload: delivery.widgetReload,
            userAlert: delivery.userAlert, receivedAt: request.receivedAt, deliveredAt: delivery.deliveredAt)
        deviceToken.withUTF8 { token in
            bundleID.withUTF8 { bundleID in
                collapseID.withUTF8OrNil { collapseID in
                    let head = Head(
                        apnsID: request.apnsID, deviceToken: UnsafeRawBufferPointer(token), foldsToken: false, bundleID: bundleID,
                        pushType: request.pushType, priority: request.priority, collapseID: collapseID,
                        disposition: delivery.disposition, reason: delivery.reason)
                    write(head, payload: .payload(delivery.content.payload), tail, to: &writer, timestamps: &timestamps)
                }
            }
        }
        return writer.finish()
    }

    /// A delivery record's value up to its payload: `{"apnsId":...,"payload":`.
    private static func writeHead(
        to writer: inout JSONWriter, apnsID: MessageID, deviceToken: UnsafeRawBufferPointer, foldsToken: Bool,
        bundleID: UnsafeBufferPointer<UInt8>, pushType: PushType, priority: Priority, collapseID: UnsafeBufferPointer<UInt8>?,
        disposition: Disposition, reason: DeliveryReason
    ) {
        writer.append(#"{"apnsId":"#)
        writer.write(messageID: apnsID)
        writer.append(#","deviceToken":""#)
        writeDigits(of: deviceToken, folding: foldsToken, to: &writer)
        writer.append(#"","bundleId":"#)
        writer.write(stringBytes: bundleID)
        writer.append(#","pushType":"#)
        writer.append(pushType.quotedJSON)
        writer.append(#","priority":"#)
        writer.write(integer: priority.rawValue)
        writer.append(#","collapseId":"#)
        if let collapseID { writer.write(stringBytes: collapseID) } else { writer.append("null") }
        writer.append(#","disposition":"#)
        writer.append(disposition.quotedJSON)
        writer.append(#","reason":"#)
        writer.append(reason.quotedJSON)
        writer.append(#","payload":"#)
    }

    /// A delivery record's value after its payload, to its end.
    private static func writeTail(
        to writer: inout JSONWriter, attachments: [JSONObject], extensionReport: ExtensionReport?, presentation: Presentation?,
        badgeEffect: BadgeEffect, badgeCount: Int?, appState: AppState, appCallback: AppCallback?, liveActivity: LiveActivityReport?,
        channelID: String?, widgetReload: Bool?, userAlert: UserAlert?, receivedAt: Date, deliveredAt: Date,
        timestamps: inout Timestamp.Cache
    ) {
        writer.append(#","attachments":["#)
        for position in attachments.indices {
            if position > 0 { writer.append(",") }
            writer.write(object: attachments[position])
        }
        writer.append(#"],"extension":"#)
        if let extensionReport {
            write(extensionReport, to: &writer)
        } else {
            writer.append("null")
        }
        writer.append(#","presentation":"#)
        if let presentation {
            write(presentation, to: &writer)
        } else {
            writer.append("null")
        }
        writer.append(#","badgeEffect":"#)
        writer.append(badgeEffect.quotedJSON)
        writer.append(#","badgeCount":"#)
        if let badgeCount { writer.write(integer: badgeCount) } else { writer.append("null") }
        writer.append(#","appState":"#)
        writer.append(appState.quotedJSON)
        writer.append(#","appCallback":"#)
        writer.append(appCallback?.quotedJSON ?? "null")
        writer.append(#","liveActivity":"#)
        if let report = liveActivity {
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
        writer.write(stringOrNull: channelID)
        writer.append(#","widgetReload":"#)
        switch widgetReload {
        case nil: writer.append("null")
        case let reload?: writer.append(reload ? "true" : "false")
        }
        writer.append(#","userAlert":"#)
        if let userAlert {
            write(userAlert, to: &writer)
        } else {
            writer.append("null")
        }
        // Timestamps need no escaping: their bytes go into the buffer as they are written.
        writer.append(#","receivedAt":""#)
        timestamps.write(receivedAt, to: &writer)
        writer.append(#"","deliveredAt":""#)
        timestamps.write(deliveredAt, to: &writer)
        writer.append(#""}"#)
    }

    /// The launch record's value written straight into one buffer, as ``deliveryBytes(_:)`` is:
    /// the bytes of `launch(apnsID:deviceToken:bundleID:trigger:payload:)` serialised.
    static func launchBytes(
        apnsID: String, deviceToken: String, bundleID: String, trigger: LaunchTrigger, payload: Payload
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: payload.byteCountHint + 256)
        var apnsID = apnsID
        var deviceToken = deviceToken
        var bundleID = bundleID
        apnsID.withUTF8 { apnsID in
            deviceToken.withUTF8 { token in
                bundleID.withUTF8 { bundleID in
                    writeLaunchHead(
                        to: &writer, apnsID: apnsID, deviceToken: UnsafeRawBufferPointer(token), foldsToken: false, bundleID: bundleID,
                        trigger: trigger)
                }
            }
        }
        writer.write(payload: payload)
        writer.append("}}")
        return writer.finish()
    }

    /// A launch record's value up to its payload; `}}` closes it after the payload.
    static func writeLaunchHead(
        to writer: inout JSONWriter, apnsID: UnsafeBufferPointer<UInt8>, deviceToken: UnsafeRawBufferPointer, foldsToken: Bool,
        bundleID: UnsafeBufferPointer<UInt8>, trigger: LaunchTrigger
    ) {
        writer.append(#"{"apnsId":"#)
        writer.write(stringBytes: apnsID)
        writer.append(#","deviceToken":""#)
        writeDigits(of: deviceToken, folding: foldsToken, to: &writer)
        writer.append(#"","bundleId":"#)
        writer.write(stringBytes: bundleID)
        writer.append(#","trigger":"#)
        writer.write(string: trigger.rawValue)
        writer.append(#","launchOptions":{"remoteNotification":"#)
    }

    /// A device token's hexadecimal digits as they are, or lowercase: digits need no escaping.
    private static func writeDigits(of deviceToken: UnsafeRawBufferPointer, folding: Bool, to writer: inout JSONWriter) {
        guard folding else { return writer.append(bytes: deviceToken) }
        writer.write(upTo: deviceToken.count) { room in
            DeviceToken.writeLowercased(deviceToken, to: room.baseAddress!)
            return deviceToken.count
        }
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
        writer.append(alert.interruptionLevel.quotedJSON)
        writer.append(#","focus":"#)
        writer.append(alert.focus.quotedJSON)
        writer.append(#","willPresent":"#)
        writer.append(alert.willPresentCalled ? UserAlert.willPresentQuotedJSON : "null")
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

extension Optional where Wrapped == String {
    /// Calls `body` with the string's UTF-8 bytes, or nil.
    mutating func withUTF8OrNil<Result>(_ body: (UnsafeBufferPointer<UInt8>?) -> Result) -> Result {
        guard self != nil else { return body(nil) }
        return self!.withUTF8 { body($0) }
    }
}
