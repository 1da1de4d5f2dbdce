import Dispatcher
import Foundation
import JSON
import Notifications

extension ExplanationStages {
    private typealias Line = ExplanationStep.Line

    // MARK: Live Activities (section 14)

    /// What a Live Activity push did: the activity addressed, the row of section 14.3 that
    /// matched, the activity's state after it and the activities record.
    func liveActivity(_ report: LiveActivityReport, delivery: Delivery) -> ExplanationStep {
        let isBroadcast = delivery.channelID != nil
        var lines: [Line] = []
        var citations: [Citation] = [.activityResultOrder, .row(of: report.result)]
        if isBroadcast {
            lines.append(Line(.note, "activity \(report.activityToken), subscribed to channel \(delivery.channelID ?? "")"))
        } else if report.event == .start {
            lines.append(Line(.note, "activity token \(report.activityToken): SHA-256 of <key>/<apns-id> (a push to start creates a new activity)"))
            citations.insert(.activityAddressed, at: 0)
        } else {
            lines.append(Line(.note, "activity token \(report.activityToken): the record's key"))
            citations.insert(.activityOfApp, at: 0)
        }
        lines.append(Line(.note, "event \(report.event?.rawValue ?? "(none)"), priority \(delivery.request.priority.rawValue)"))
        for result in LiveActivityResult.allCases where !(isBroadcast && (result == .channelUnknown || result == .started)) {
            if result == report.result {
                lines.append(Line(.decided, "row \(result.row): \(result.rawValue)"))
                break
            }
            lines.append(Line(.passed, "row \(result.row) (\(result.rawValue)): does not apply"))
        }
        switch report.result {
        case .endedIgnored: citations.append(.endedIgnored)
        case .staleIgnored: citations.append(.staleTimestamp)
        case .throttled: citations.append(.budget)
        case .ended: citations.append(.dismissal)
        default: break
        }
        if let change = delivery.activityChange {
            lines.append(Line(.note, "an activities record follows the delivery: the activity's new entry (status \(change.entry.status.rawValue))"))
            if let evicted = change.evicted {
                lines.append(Line(.note, "the activities table was full: the dismissed activity \(evicted) was dropped (its tombstone follows)"))
                citations.append(.activitiesLimit)
            }
            citations.append(.activityOutput)
        }
        let state = report.state.map { "the activity is \($0.rawValue)" } ?? "no activity"
        return ExplanationStep(
            .liveActivity, title: "Live Activity",
            verdict: "\(report.result.rawValue) (section 14.3 row \(report.result.row)); \(state)\(report.alerted ? "; the user is alerted" : "")",
            lines: lines,
            facts: [
                "activityToken": .string(report.activityToken), "event": report.event.map { .string($0.rawValue) } ?? .null,
                "result": .string(report.result.rawValue), "row": .number(JSONNumber(report.result.row)),
                "state": report.state.map { .string($0.rawValue) } ?? .null, "alerted": .bool(report.alerted),
                "activityRecord": .bool(delivery.activityChange != nil),
            ],
            citations: citations)
    }

    // MARK: Broadcast (section 15)

    /// A valid broadcast's fan-out: each subscribed activity's result, in token order.
    func broadcast(_ parts: [DispatchResult]) -> ExplanationStep {
        var lines: [Line] = []
        var citations: [Citation] = [.fanOut]
        for part in parts {
            if let delivery = part.delivery {
                let result = delivery.liveActivity.map { "\($0.result.rawValue) (row \($0.result.row))" } ?? delivery.reason.rawValue
                lines.append(Line(.decided, "activity \(delivery.request.deviceToken): \(result)"))
                if delivery.reason == .expired, !citations.contains(.expiredBroadcast) { citations.append(.expiredBroadcast) }
            } else if let deadLetter = part.deadLetter {
                lines.append(Line(.decided, "dead letter \(deadLetter.rejection.reason.rawValue): \(deadLetter.rejection.detail)"))
            }
        }
        if parts.isEmpty {
            lines.append(Line(.note, "no activity is subscribed to the channel: no output"))
            citations.append(.noSubscriber)
        }
        return ExplanationStep(
            .broadcast, title: "Broadcast fan-out",
            verdict: parts.isEmpty ? "no subscribed activity" : "\(parts.count) subscribed activit\(parts.count == 1 ? "y" : "ies"), in token order",
            lines: lines, facts: ["activities": .number(JSONNumber(parts.count))], citations: citations)
    }

    // MARK: Store and forward (section 16)

    /// A request to an offline device: stored, after the delivery of the one it replaced.
    func storeAndForward(_ stored: StoredNotification, replaced: Delivery?) -> ExplanationStep {
        var lines = [
            Line(.decided, "the device is offline (devices table: online false): stored under \(stored.key)"),
            Line(.note, "kept until \(Timestamp.rfc3339(Date(timeIntervalSince1970: Double(stored.expiresAt) / 1_000))) (expiresAt)"),
        ]
        var citations: [Citation] = [.offline]
        if let replaced {
            lines.append(Line(.decided, "it replaces the stored notification \(replaced.request.apnsID): discarded (\(replaced.reason.rawValue))"))
            citations.append(.newestOnly)
        }
        return ExplanationStep(
            .storeAndForward, title: "Store and forward", verdict: "stored until the device comes back online", lines: lines,
            facts: [
                "key": .string(stored.key), "expiresAt": .number(JSONNumber(Int(stored.expiresAt))),
                "replaced": replaced.map { .string($0.reason.rawValue) } ?? .null,
            ],
            citations: citations)
    }

    /// A request to an offline device with `apns-expiration` 0: delivered once, not stored.
    func notStored() -> ExplanationStep {
        ExplanationStep(
            .storeAndForward, title: "Store and forward",
            verdict: "discarded (not-stored): the device is offline and apns-expiration is 0",
            lines: [Line(.decided, "the device is offline (devices table: online false) and apns-expiration is 0: tried once, not stored")],
            facts: ["stored": false], citations: [.offline, .notStored])
    }
}
