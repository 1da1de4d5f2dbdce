import Dispatcher
import DispatcherTools
import JSON
import Kafka
import Logging
import Notifications
import Records
import ServiceLifecycle
import Synchronization

/// Shows, as each first happens, one record of every outcome the `dev` worker writes (a modified
/// delivery, an original one, a discarded one, an action record, a dead letter, a feedback record, a launch, a Live
/// Activity's start, update and end, a broadcast's delivery, an activities record, a delivery the
/// user's settings kept quiet, one to a user who did not authorize notifications, an extension
/// stopped for its memory, a badge count of the ledger), read back from the output
/// topics and printed as `dispatch` prints records, so a newcomer sees what the records look like,
/// not only counts.
final class DemoExamples: Service, Sendable {
    /// The outcomes shown, in the order of the records that show them.
    enum Outcome: String, CaseIterable, Sendable {
        case modified = "modified delivery"
        case original = "original delivery"
        case discarded = "discarded delivery"
        case action = "action record"
        case deadLetter = "dead letter"
        case feedback = "feedback record"
        case launch = "launch"
        case liveActivityStart = "Live Activity start"
        case liveActivityUpdate = "Live Activity update"
        case liveActivityEnd = "Live Activity end"
        case broadcast = "broadcast delivery"
        case activity = "activities record"
        case quiet = "quiet delivery (notification list only: provisional authorization)"
        case notAuthorized = "delivery to a user who did not authorize notifications"
        case memoryLimit = "extension stopped for its memory"
        case badgeCount = "badge count of the ledger (after a badge-increment)"
    }

    /// One reader per output topic, with the kind of the records on it.
    private let readers: [(reader: KafkaTopicReader, kind: OutputRecord.Kind)]
    /// Where examples are printed.
    private let console: DemoConsole
    /// The outcomes shown so far, and how many output records were read.
    private let state = Mutex<(shown: Set<Outcome>, read: Int)>(([], 0))

    /// Starts reading the deliveries, actions, launches, dead-letter and feedback topics of `topics` from their beginning.
    /// `properties` are the configuration's `kafka.properties` (security; `fetch.wait.max.ms`).
    init(bootstrapServers: String, properties: [String: String], topics: TopicSettings, console: DemoConsole, logger: Logger) throws {
        var configuration = ConsumerConfiguration(bootstrapServers: bootstrapServers, groupID: "notification-dispatcher-dev-examples")
        configuration.properties = properties
        var readers: [(KafkaTopicReader, OutputRecord.Kind)] = []
        let outputs: [(String, OutputRecord.Kind)] = [
            (topics.deliveries, .delivery), (topics.actions, .action), (topics.launches, .launch), (topics.deadLetter, .deadLetter),
            (topics.feedback, .feedback), (topics.activities, .activity), (topics.badges, .badge),
        ]
        for (topic, kind) in outputs {
            readers.append((try KafkaTopicReader(configuration: configuration, topic: topic, logger: logger), kind))
        }
        self.readers = readers
        self.console = console
    }

    /// Output records read so far, on all the output topics.
    var recordsRead: Int { state.withLock { $0.read } }

    /// Reads until the demo shuts down, printing the first record of each outcome.
    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            for (reader, kind) in readers {
                group.addTask {
                    for await event in reader.events {
                        guard case .messages(let messages) = event else { continue }
                        for message in messages { self.take(message, kind: kind) }
                    }
                }
            }
            group.addTask { [readers] in
                // Closing a reader ends its events and so its loop above: once the demo shuts
                // down (or this task is cancelled), close them all.
                try? await gracefulShutdown()
                for (reader, _) in readers { await reader.close() }
            }
        }
    }

    /// Counts `message` and prints it when it is the first of its outcome.
    private func take(_ message: KafkaMessage, kind: OutputRecord.Kind) {
        let outcome = Self.outcome(of: message, kind: kind)
        let isFirst = state.withLock { state in
            state.read += 1
            return outcome.map { state.shown.insert($0).inserted } ?? false
        }
        guard isFirst, let outcome else { return }
        let record = OutputRecord(
            kind: kind, topic: message.topic, key: message.key,
            headers: message.headers, value: message.value)
        console.show("First \(outcome.rawValue), as written to \(message.topic):\n  " + String(decoding: JSONLines.encode(record), as: UTF8.self))
    }

    /// Whether a delivery is shown as provisional authorization shows it (section 20): in the list,
    /// without a banner or a sound, at an interruption level that would have had a banner, the
    /// badge unchanged although the payload sets one. Passive and Focus-silenced alerts are quiet
    /// for other reasons, and a banner-less foreground delivery shows its options: not these.
    static func isQuiet(_ delivery: JSONValue) -> Bool {
        guard let alert = delivery[path: ["userAlert"]], !alert.isNull, alert[path: ["list"]] == .bool(true),
            alert[path: ["banner"]] == .bool(false), alert[path: ["sound"]] == .bool(false),
            alert[path: ["interruptionLevel"]]?.stringValue != "passive", alert[path: ["focus"]]?.stringValue != "silenced",
            alert[path: ["options"]]?.isNull != false, delivery[path: ["badgeEffect"]] == "unchanged",
            delivery[path: ["payload", "aps", "badge"]] != nil
        else { return false }
        return true
    }

    /// The outcome a record shows: a delivery's disposition, an action record, a dead letter, a launch.
    static func outcome(of message: KafkaMessage, kind: OutputRecord.Kind) -> Outcome? {
        switch kind {
        case .action: return .action
        case .launch: return .launch
        case .deadLetter: return .deadLetter
        case .feedback: return .feedback
        case .activity: return .activity
        case .badge: return .badgeCount
        case .stored, .command: return nil
        case .delivery:
            guard let value = message.value, let json = try? JSONValue(parsing: value),
                let disposition = json[path: ["disposition"]]?.stringValue.flatMap(Disposition.init(rawValue:))
            else { return nil }
            // Sections 14 and 15: a broadcast's delivery, and a Live Activity's start, update and end.
            if let channel = json[path: ["channelId"]], !channel.isNull { return .broadcast }
            switch json[path: ["liveActivity", "result"]]?.stringValue {
            case "started": return .liveActivityStart
            case "updated": return .liveActivityUpdate
            case "ended": return .liveActivityEnd
            default: break
            }
            // Sections 20 and 22: what the user's settings and the extension's memory did.
            switch json[path: ["reason"]]?.stringValue {
            case DeliveryReason.notAuthorized.rawValue: return .notAuthorized
            case DeliveryReason.extensionMemoryLimit.rawValue: return .memoryLimit
            default: break
            }
            if isQuiet(json) { return .quiet }
            switch disposition {
            case .modified: return .modified
            case .original: return .original
            case .discarded: return .discarded
            }
        }
    }
}
