/// What a request's outputs may look like to their readers after a worker dies or loses its
/// partitions (`dispatch.guarantee`; docs/worker.md, "Guarantee" and "Exactly-once").
public enum DeliveryGuarantee: String, Sendable, Hashable, CaseIterable {
    /// Every request's outputs are written at least once: after a crash or a lost partition,
    /// requests done but not yet committed are processed again, and their outputs written again
    /// (readers de-duplicate by `apns-id`). The default, and the cheapest.
    case atLeastOnce = "at-least-once"
    /// Each worker writes its outputs and commits its consumed offsets in one Kafka transaction,
    /// so a `read_committed` reader sees every request's outputs exactly once, across crashes and
    /// rebalances.
    case exactlyOnce = "exactly-once"
}
