import CRdKafka

/// librdkafka properties the worker's clients set unless `kafka.properties` names them: defaults
/// that changed after librdkafka 2.0.2 where the new one buys the dispatcher nothing
/// (docs/performance.md, "librdkafka 2.0.2 → 2.8.0", has the measurements).
public enum LibrdkafkaDefaults {
    /// For consumers and producers alike, each only where the linked librdkafka knows it (an
    /// unknown property would stop the client from starting).
    public static var everyClient: [String: String] {
        var defaults: [String: String] = [:]
        // KIP-714 client metrics (librdkafka 2.5.0, on by default): each client asks the broker
        // for a metrics subscription on connecting, and where the broker has one it collects,
        // encodes and sends its metrics at every push interval. 2.0.2 had none of it, the
        // dispatcher exports its own metrics, and the Prometheus endpoint is where operators look.
        // Without it: a GetTelemetrySubscriptions round trip per client and, on brokers with a
        // subscription, a PushTelemetry per interval (per second of wall time, not per record: no
        // difference measurable on the mock cluster, whose push interval is 5 minutes).
        if rd_kafka_version() >= 0x0205_0000 { defaults["enable.metrics.push"] = "false" }
        return defaults
    }

    /// `defaults` with `configured` on top: what a user sets always wins.
    public static func applying(_ configured: [String: String], over defaults: [String: String] = everyClient) -> [String: String] {
        defaults.merging(configured) { _, configured in configured }
    }
}
