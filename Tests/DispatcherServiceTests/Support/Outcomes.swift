import Dispatcher
import Kafka
import Notifications

/// What happened to one request, in the terms both the offline dispatcher and the output topics
/// can state: so a run through Kafka can be compared with the rules applied offline.
struct Outcome: Sendable, Equatable, CustomStringConvertible {
    /// `modified`, `original`, `discarded`, or `dead-letter`.
    var disposition: String
    /// The delivery reason, or the dead letter's APNs reason.
    var reason: String
    var appState: String?
    var callback: String?
    /// The launch trigger, nil without a launch record.
    var launch: String?

    /// The outcome the dispatcher decided offline.
    init(_ result: DispatchResult) {
        switch result.decision {
        case .deadLettered(let deadLetter):
            disposition = "dead-letter"
            reason = deadLetter.rejection.reason.rawValue
        case .delivered(let delivery):
            disposition = delivery.disposition.rawValue
            reason = delivery.reason.rawValue
            appState = delivery.appState.rawValue
            callback = delivery.appCallback?.rawValue
            launch = delivery.launch?.rawValue
        case .handled(let handled):
            disposition = "action:" + handled.handling.handledBy.rawValue
            reason = handled.handling.reason.rawValue
            appState = handled.appState.rawValue
            callback = handled.handling.appCallback?.rawValue
            launch = handled.handling.launch?.rawValue
        }
    }

    init(disposition: String, reason: String, appState: String? = nil, callback: String? = nil, launch: String? = nil) {
        self.disposition = disposition
        self.reason = reason
        self.appState = appState
        self.callback = callback
        self.launch = launch
    }

    var description: String {
        [disposition, reason, appState ?? "-", callback ?? "-", launch ?? "-"].joined(separator: "/")
    }
}

/// The outcomes read back from a pipeline's output topics, by `apns-id`.
struct Outcomes {
    /// The outcome of each request (the last record wins when a request has duplicates).
    private(set) var byID: [String: Outcome] = [:]
    /// How many deliveries and dead letters each `apns-id` has.
    private(set) var countsByID: [String: Int] = [:]
    /// Device tokens whose deliveries are not in the order their requests were numbered.
    private(set) var devicesOutOfOrder: [String] = []

    init(_ outputs: OutputCollector) {
        var launches: [String: String] = [:]
        for record in outputs.records(of: Pipeline.launches) {
            if let id = record.header("apns-id"), let trigger = record.json?["trigger"]?.stringValue {
                launches[id] = trigger
            }
        }
        var lastSequence: [String: Int] = [:]
        var outOfOrder: Set<String> = []
        for record in outputs.records(of: Pipeline.deliveries) {
            guard let id = record.header("apns-id"), let json = record.json else { continue }
            countsByID[id, default: 0] += 1
            byID[id] = Outcome(
                disposition: json["disposition"]?.stringValue ?? "?",
                reason: json["reason"]?.stringValue ?? "?",
                appState: json["appState"]?.stringValue,
                callback: json["appCallback"]?.stringValue,
                launch: launches[id]
            )
            if let token = json["deviceToken"]?.stringValue,
                let sequence = json["payload"]?.objectValue?["seq"]?.numberValue?.intValue
            {
                if let last = lastSequence[token], sequence <= last { outOfOrder.insert(token) }
                lastSequence[token] = sequence
            }
        }
        for record in outputs.records(of: Pipeline.deadLetter) {
            guard let id = record.header("apns-id") else { continue }
            countsByID[id, default: 0] += 1
            byID[id] = Outcome(disposition: "dead-letter", reason: record.header("dlq-reason") ?? "?")
        }
        devicesOutOfOrder = outOfOrder.sorted()
    }
}
