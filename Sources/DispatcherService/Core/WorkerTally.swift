import Dispatcher
import Kafka
import Notifications
import Records

/// Every count the worker keeps, kept once: `dev`'s summary (``WorkerStatistics``), Prometheus
/// (``WorkerMetrics/update(from:)`` copies the growth in before each scrape) and the metrics
/// topic's snapshots (and so `top`) all read these.
///
/// Outcomes are counted by their typed labels (enums, not strings): counting is a small hash per
/// record under the worker's lock; the label strings are made only when someone reads.
struct WorkerTally: Sendable, Equatable {
    /// A delivery's labels.
    struct DeliveryLabel: Hashable, Sendable {
        var disposition: Disposition
        var reason: DeliveryReason
    }

    /// An action record's labels.
    struct ActionLabel: Hashable, Sendable {
        var handledBy: HandledBy
        var reason: ActionReason
    }

    /// Records consumed (requests and responses, including ones later dropped with their partition).
    var consumed = 0
    /// Requests whose outputs were all acknowledged, by disposition and reason.
    var deliveries: [DeliveryLabel: Int] = [:]
    /// Dead letters acknowledged, by reason.
    var deadLetters: [RejectionReason: Int] = [:]
    /// Responses whose outputs were all acknowledged, by who handled them and why.
    var actions: [ActionLabel: Int] = [:]
    /// Launch records acknowledged, by trigger.
    var launches: [LaunchTrigger: Int] = [:]
    /// Feedback records acknowledged (SEMANTICS section 12.2), by token reason.
    var feedback: [RejectionReason: Int] = [:]
    /// Output records acknowledged, by topic.
    var outputs: [String: Int] = [:]
    /// Records done (every output acknowledged), by the topic they were consumed from: requests
    /// and responses, and with partitioned state devices records and Live Activity commands.
    var finished: [String: Int] = [:]
    /// Records whose result was dropped because their partition left the worker meanwhile.
    var staleResults = 0
    /// Successful and failed commits.
    var commits = 0
    var commitFailures = 0
    /// Group rebalances seen (assignments, revocations, losses).
    var rebalances = 0
    /// Offsets handed over below one already received (``WorkerCore/Rewind``).
    var offsetRewinds = 0
    /// Offsets the consumer never handed over between two it did, in the same assignment: a
    /// compacted topic's removed records, a transaction's markers, or records lost on the way
    /// (none of which a topic written without transactions and never compacted has). The
    /// offsets tracker commits past them.
    var offsetsSkipped = 0
    /// Records started behind running records of their key that only awaited their outputs'
    /// acknowledgements (``SerialQueues``, pipelined), rather than copied to wait for them.
    var pipelined = 0
    /// Consumer lag per owned partition, from librdkafka's latest statistics: kept here only,
    /// for `dev`'s summary, the metrics topic's snapshots and (as gauges) Prometheus.
    var lag: [TopicPartition: Int64] = [:]

    /// Counts a record whose outputs were all acknowledged.
    mutating func count(_ result: DispatchResult) {
        // A broadcast's or a devices record's several decisions are counted one by one.
        // The result's labels, not its decision: reading the decision would copy it.
        let labels = result.labels
        if case .several = labels.outcome {
            for part in result.parts { count(part) }
            return
        }
        count(labels, outputTopics: result.outputs.lazy.map(\.topic))
    }

    /// Counts one outcome: its labels (of one part: ``count(_:)`` splits several) and its
    /// outputs' topics.
    mutating func count(_ labels: DispatchResult.Labels, outputTopics: some Sequence<String>) {
        count(labels, times: 1)
        for topic in outputTopics { outputs[topic, default: 0] += 1 }
    }

    /// Counts `times` outcomes of the same labels (their outputs are counted by the caller).
    mutating func count(_ labels: DispatchResult.Labels, times: Int) {
        switch labels.outcome {
        case .deadLetter(let reason, let withFeedback):
            deadLetters[reason, default: 0] += times
            if withFeedback { feedback[reason, default: 0] += times }
        case .delivery(let disposition, let reason):
            deliveries[DeliveryLabel(disposition: disposition, reason: reason), default: 0] += times
        case .action(let handledBy, let reason):
            actions[ActionLabel(handledBy: handledBy, reason: reason), default: 0] += times
        case .several, .none:
            break
        }
        if let launch = labels.launch { launches[launch, default: 0] += times }
    }

    /// Records that ended as a delivery, an action or a dead letter.
    var accountedFor: Int {
        deliveries.values.reduce(0, +) + actions.values.reduce(0, +) + deadLetters.values.reduce(0, +)
    }

    /// The totals as the metrics topic publishes them (labels as strings).
    var totals: MetricsSnapshot.Totals {
        var totals = MetricsSnapshot.Totals()
        totals.consumed = consumed
        for (label, count) in deliveries {
            totals.deliveries[label.disposition.rawValue, default: 0] += count
            totals.deliveryReasons["\(label.disposition.rawValue)/\(label.reason.rawValue)", default: 0] += count
        }
        for (reason, count) in deadLetters { totals.deadLetters[reason.rawValue, default: 0] += count }
        for (label, count) in actions { totals.actions["\(label.handledBy.rawValue)/\(label.reason.rawValue)", default: 0] += count }
        for (trigger, count) in launches { totals.launches[trigger.rawValue, default: 0] += count }
        for (reason, count) in feedback { totals.feedback[reason.rawValue, default: 0] += count }
        totals.outputs = outputs
        totals.commits = commits
        totals.commitFailures = commitFailures
        totals.rebalances = rebalances
        totals.offsetsSkipped = offsetsSkipped
        return totals
    }
}
