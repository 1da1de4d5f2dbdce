/// The `dev` demo's configuration and sample records (requests and responses), built into the
/// binary (SwiftPM embeds `Demo/`, which links to `Config/dispatcher.yaml` and `Config/samples/`),
/// so `dev` runs from any folder, and from a binary copied alone into a container.
enum DemoBundle {
    /// `Config/dispatcher.yaml` as built.
    static var configuration: String { String(decoding: PackageResources.dispatcher_yaml, as: UTF8.self) }

    /// `Config/samples/*.jsonl` as built, in name order. A new sample file is listed here too;
    /// `dev` prints the names, and a test compares them with the folder.
    static let samples: [(name: String, contents: [UInt8])] = [
        ("alerts.jsonl", PackageResources.alerts_jsonl),
        ("badge-ledger.jsonl", PackageResources.badge_ledger_jsonl),
        ("broadcast.jsonl", PackageResources.broadcast_jsonl),
        ("expired.jsonl", PackageResources.expired_jsonl),
        ("filtering.jsonl", PackageResources.filtering_jsonl),
        ("force-quit.jsonl", PackageResources.force_quit_jsonl),
        ("headers.jsonl", PackageResources.headers_jsonl),
        ("invalid.jsonl", PackageResources.invalid_jsonl),
        ("live-activities.jsonl", PackageResources.live_activities_jsonl),
        ("mdm.jsonl", PackageResources.mdm_jsonl),
        ("memory-limit.jsonl", PackageResources.memory_limit_jsonl),
        ("notification-settings.jsonl", PackageResources.notification_settings_jsonl),
        ("push-types.jsonl", PackageResources.push_types_jsonl),
        ("responses.jsonl", PackageResources.responses_jsonl),
        ("silent.jsonl", PackageResources.silent_jsonl),
        ("store-and-forward.jsonl", PackageResources.store_and_forward_jsonl),
        ("tokens.jsonl", PackageResources.tokens_jsonl),
        ("too-many-requests.jsonl", PackageResources.too_many_requests_jsonl),
        ("user-alerts.jsonl", PackageResources.user_alerts_jsonl),
        ("voip.jsonl", PackageResources.voip_jsonl),
        ("widgets.jsonl", PackageResources.widgets_jsonl),
    ]
}
