public import Notifications

/// The result of dispatching one record, a request or a user's response: the decision, the records
/// to write, and a summary for metrics and logs.
///
/// Immutable, and stored behind one reference: a worker passes each result through several
/// batches and arrays (decided, produced, acknowledged, counted), and copying the decision inline
/// (a delivery with its request, strings and arrays) retained every one of its references each
/// time, a tenth of the worker's CPU.
public struct DispatchResult: Sendable {
    /// A valid request's delivery, a valid response's handling, or an invalid record's dead letter.
    public enum Decision: Sendable {
        /// The request was valid.
        case delivered(Delivery)
        /// The response was valid (SEMANTICS section 10).
        case handled(HandledResponse)
        /// The request or response was invalid.
        case deadLettered(DeadLetter)
        /// A valid request to an offline device, stored until the device comes back online
        /// (SEMANTICS section 16.1), after the delivery of the stored notification it replaced.
        case stored(StoredNotification, replaced: Delivery?)
        /// Several decisions for one input record, in output order: a broadcast's deliveries, one
        /// per subscribed activity (section 15), or the stored notifications a devices record
        /// delivers (section 16.3). Empty for a broadcast no activity subscribes to.
        case several([DispatchResult])
    }

    /// The decision and the outputs.
    private final class Storage: Sendable {
        let decision: Decision
        let outputs: [OutputRecord]
        let labels: Labels
        let outputBytes: Int

        init(decision: Decision, outputs: [OutputRecord]) {
            self.decision = decision
            self.outputs = outputs
            labels = Labels(decision, outputs: outputs)
            // Here, in the module of `OutputLimit.size(of:)`: the worker summed the sizes itself,
            // and each call across the module boundary copied the record (a retain per part).
            outputBytes = outputs.reduce(0) { $0 + OutputLimit.size(of: $1) }
        }
    }

    private let storage: Storage

    /// What was decided.
    public var decision: Decision { storage.decision }
    /// The records to write, in order: the delivery or action then the launch, or the one dead letter.
    public var outputs: [OutputRecord] { storage.outputs }
    /// What the result is counted by, read without copying the decision.
    package var labels: Labels { storage.labels }
    /// The bytes the outputs take against the output limit (``OutputLimit/size(of:)``), summed
    /// once: a worker holds that much for the result until the brokers acknowledge it.
    package var outputBytes: Int { storage.outputBytes }

    /// Creates the result of `decision`, with its output records for `topics` (a dead letter cut
    /// to fit `limit`).
    package init(_ decision: Decision, topics: TopicSettings, limit: OutputLimit = .default) {
        self.init(decision, outputs: Self.outputRecords(for: decision, topics: topics, limit: limit))
    }

    /// Creates a result whose outputs were made elsewhere (a dead letter cut further after the
    /// brokers refused it).
    package init(_ decision: Decision, outputs: [OutputRecord]) {
        storage = Storage(decision: decision, outputs: outputs)
    }

    /// Whether every output fits `limit`.
    package func fits(_ limit: OutputLimit) -> Bool {
        outputs.allSatisfy(limit.fits)
    }

    /// The result of each delivery, dead letter or stored request in this one, in output order:
    /// itself for a single decision, the parts of ``Decision/several(_:)`` (flattened).
    public var parts: [DispatchResult] {
        guard case .several(let parts) = decision else { return [self] }
        return parts.flatMap(\.parts)
    }

    /// The delivery, nil for a response or a dead letter.
    public var delivery: Delivery? {
        if case .delivered(let delivery) = decision { return delivery }
        return nil
    }

    /// The handled response, nil for a request or a dead letter.
    public var handledResponse: HandledResponse? {
        if case .handled(let handled) = decision { return handled }
        return nil
    }

    /// The dead letter, nil for a delivery or a handled response.
    public var deadLetter: DeadLetter? {
        if case .deadLettered(let deadLetter) = decision { return deadLetter }
        return nil
    }

    /// The delivery's disposition, nil for anything else.
    public var disposition: Disposition? { delivery?.disposition }
    /// The delivery's reason, nil for anything else.
    public var reason: DeliveryReason? { delivery?.reason }
    /// The launch trigger, nil when there is no launch.
    public var launchTrigger: LaunchTrigger? { labels.launch }
    /// The dead letter's reason, nil for anything else.
    public var rejectionReason: RejectionReason? { deadLetter?.rejection.reason }
    /// The extension's report name (steps joined with `+`), nil when none ran.
    public var extensionName: String? { delivery?.extensionReport?.name }
    /// How the extension run ended, nil when none ran.
    public var extensionOutcome: ExtensionOutcome? { delivery?.extensionReport?.outcome }
    /// How long the extension ran, nil when none ran.
    public var extensionElapsed: Duration? { delivery?.extensionReport?.elapsed }
}
