import Foundation

/// How failure messages name where records lie and when things happened, alike in every test,
/// so that they can be matched with each other and with the workers' logs.
enum FailurePlaces {
    /// A topic's partition by the topic's last name: `deliveries/3` for `notifications.deliveries`.
    static func partition(_ partition: Int32, of topic: String) -> String {
        "\(topic.split(separator: ".").last ?? "")/\(partition)"
    }

    /// A moment as its milliseconds within a hundred seconds: the log's `ss.mmm`, with the tens
    /// of seconds, without the point (`12:19:05.734` is 5734 or 65734, as the minute falls).
    static func millisecond(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970 * 1_000) % 100_000
    }
}
