import Dispatcher
import JSON
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
        case .stored, .several:
            // Sections 15 and 16: not among the outcomes these suites compare.
            disposition = "other"
            reason = "other"
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

extension Outcome {
    /// The outcome a delivery or action record states, with the trigger of its launch, if any.
    init(served json: JSONObject, launch: String?) {
        if let handledBy = json["handledBy"]?.stringValue {
            disposition = "action:" + handledBy
        } else {
            disposition = json["disposition"]?.stringValue ?? "?"
        }
        reason = json["reason"]?.stringValue ?? "?"
        appState = json["appState"]?.stringValue
        callback = json["appCallback"]?.stringValue
        self.launch = launch
    }
}

/// The outcomes read back from a pipeline's output topics: of requests by `apns-id` (deliveries),
/// or of responses by `traceparent` (action records, `TestResponse`).
struct Outcomes {
    /// Whose outcomes to read.
    enum Records {
        /// Requests: deliveries and dead letters, by `apns-id`; a device's order from the payload's `seq`.
        case requests
        /// Responses: action records and dead letters, by `traceparent`; a device's order from its span id.
        case responses

        var idHeader: String { self == .requests ? "apns-id" : "traceparent" }
        var topic: String { self == .requests ? Pipeline.deliveries : Pipeline.actions }

        /// The record's position among its device's.
        func sequence(_ json: JSONObject, id: String) -> Int? {
            switch self {
            case .requests: json["payload"]?.objectValue?["seq"]?.numberValue?.intValue
            case .responses: id.split(separator: "-").dropFirst(2).first.flatMap { Int($0, radix: 16) }
            }
        }
    }

    /// The outcome of each record (the last output wins when a record has duplicates).
    private(set) var byID: [String: Outcome] = [:]
    /// How many deliveries (or action records) and dead letters each record has.
    private(set) var countsByID: [String: Int] = [:]
    /// Device tokens whose deliveries (or action records) are not in the order of their records
    /// (a record repeated at once is a duplicate, not out of order).
    private(set) var devicesOutOfOrder: [String] = []

    init(_ outputs: OutputCollector, of records: Records = .requests) {
        var launches: [String: String] = [:]
        for record in outputs.records(of: Pipeline.launches) {
            if let id = record.header(records.idHeader), let trigger = record.json?["trigger"]?.stringValue {
                launches[id] = trigger
            }
        }
        var lastSequence: [String: Int] = [:]
        var lastID: [String: String] = [:]
        var outOfOrder: Set<String> = []
        for record in outputs.records(of: records.topic) {
            guard let id = record.header(records.idHeader), let json = record.json else { continue }
            countsByID[id, default: 0] += 1
            byID[id] = Outcome(served: json, launch: launches[id])
            // A device's last record again, at once, is a duplicate (counted as such), not a
            // record out of order.
            if let token = json["deviceToken"]?.stringValue, let sequence = records.sequence(json, id: id), lastID[token] != id {
                if let last = lastSequence[token], sequence <= last { outOfOrder.insert(token) }
                lastSequence[token] = sequence
                lastID[token] = id
            }
        }
        for record in outputs.records(of: Pipeline.deadLetter) {
            guard let id = record.header(records.idHeader) else { continue }
            countsByID[id, default: 0] += 1
            byID[id] = Outcome(disposition: "dead-letter", reason: record.header("dlq-reason") ?? "?")
        }
        devicesOutOfOrder = outOfOrder.sorted()
    }

    /// The identifiers whose outcome differs from `expected`, with a sentence about the first.
    func mismatches(_ ids: [(id: String, kind: String)], expected: [String: Outcome]) -> (count: Int, example: String) {
        let differing = ids.filter { expected[$0.id] != byID[$0.id] }
        let example = differing.first.map {
            "\($0.kind): offline \(expected[$0.id].map(String.init(describing:)) ?? "none"), "
                + "served \(byID[$0.id].map(String.init(describing:)) ?? "none")"
        }
        return (differing.count, example ?? "")
    }
}
