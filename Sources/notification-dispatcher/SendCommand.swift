import ArgumentParser
import DispatcherTools
import Foundation
import Kafka
import Logging
import Notifications
import Records

/// `send`: produces one request, as a push provider would, or with `--response` or `--media`
/// one user's response to a delivered notification (SEMANTICS section 10).
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Produce one notification request, or a user's response to a delivered notification; prints the apns-id.",
        discussion: """
            A request: the payload is read from FILE, or from standard input when FILE is absent or "-"; \
            --token and --topic are required. Without an apns-id header, a new random one is set so the \
            outputs can be matched to it.

            A response (--response ACTION or --media play|pause): the input is the notification as \
            delivered, a delivery record (its apnsId, deviceToken, bundleId and payload are used; a \
            `dispatch` output line holding one works too), for example the last delivery: \
            kcat -C -b HOST:PORT -t notifications.deliveries -o -1 -c 1 -e -f '%s' | \
            notification-dispatcher send --bootstrap HOST:PORT --response LIKE. \
            The input may also be a bare payload, with --token, --topic (the bundle ID) and \
            --notification-id. It prints the notification's apns-id, which the action record carries.
            """
    )

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,HOST:PORT...].")
    var bootstrap: String

    @OptionGroup var request: RequestOptions

    @Option(help: "The apns-priority header (10, 5 or 1).")
    var priority: String?

    @Option(name: .customLong("requests-topic"), help: "The Kafka topic of requests.")
    var requestsTopic: String = "notifications.requests"

    @Option(help: "Send a response instead: the identifier of the action the user picked (default and dismiss stand for Apple's default and dismiss actions).")
    var response: String?

    @Option(help: "Send a response instead: the media button pressed, play or pause.")
    var media: String?

    @Option(help: "With --response: the text the user typed (a text-input action).")
    var text: String?

    @Option(name: .customLong("notification-id"), help: "For a response to a bare payload: the notification's apns-id.")
    var notificationID: String?

    @Option(name: .customLong("responses-topic"), help: "The Kafka topic of responses.")
    var responsesTopic: String = "notifications.responses"

    @Argument(help: "The JSON payload file (for a response: the delivery record).")
    var file: String?

    /// Whether this run sends a response.
    private var isResponse: Bool { response != nil || media != nil }

    func validate() throws {
        if response != nil, media != nil { throw ValidationError("give --response or --media, not both") }
        if let media, MediaCommand(rawValue: media) == nil { throw ValidationError("--media takes play or pause; got \"\(media)\"") }
        if text != nil, response == nil { throw ValidationError("--text goes with --response (a text-input action)") }
        if !isResponse {
            guard request.token != nil, request.topic != nil else { throw ValidationError("a request needs --token and --topic") }
            if notificationID != nil { throw ValidationError("--notification-id goes with --response or --media") }
        }
    }

    func run() async throws {
        let input: Data
        if let file, file != "-" {
            do {
                input = try NamedFile(role: "payload file", path: file, option: "the FILE argument").read()
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
        } else {
            input = FileHandle.standardInput.readDataToEndOfFile()
        }
        let extraHeaders = request.headerPairs

        let record: ProducerRecord
        let printedID: String
        if isResponse {
            let action: ResponseAction =
                if let media, let command = MediaCommand(rawValue: media) { .media(command) }
                else { ResponseDraft.action(named: response ?? "default") }
            let draft = try ResponseDraft(
                input: Array(input), action: action, userText: text, token: request.token, bundleID: request.topic,
                notificationID: notificationID)
            record = ProducerRecord(
                topic: responsesTopic, partition: nil, key: Array(draft.deviceToken.utf8), value: draft.value,
                headers: ([("apns-topic", draft.bundleID)] + extraHeaders).map { RecordHeader(name: $0.0, value: Array($0.1.utf8)) })
            printedID = draft.notificationID
        } else {
            var recordHeaders: [(String, String)] = [("apns-topic", request.topic ?? "")]
            if let pushType = request.pushType { recordHeaders.append(("apns-push-type", pushType)) }
            if let priority { recordHeaders.append(("apns-priority", priority)) }
            recordHeaders += extraHeaders
            if let given = recordHeaders.last(where: { $0.0.lowercased() == "apns-id" }) {
                printedID = given.1
            } else {
                printedID = UUID().uuidString.lowercased()
                recordHeaders.append(("apns-id", printedID))
            }
            record = ProducerRecord(
                topic: requestsTopic, partition: nil, key: Array((request.token ?? "").utf8), value: Array(input),
                headers: recordHeaders.map { RecordHeader(name: $0.0, value: Array($0.1.utf8)) })
        }

        var logger = Logger(label: "notification-dispatcher.send")
        logger.logLevel = .warning
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: bootstrap), logger: logger)
        do {
            _ = try await producer.send(record)
        } catch {
            await producer.shutdown()
            printError("send failed: \(error)")
            throw ExitCode(1)
        }
        await producer.shutdown()
        print(printedID)
    }
}
