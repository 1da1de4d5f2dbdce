import ArgumentParser
import Foundation
import Kafka
import Logging

/// `send`: produces one request, as a push provider would.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Produce one notification request to the requests topic; prints the apns-id used.",
        discussion: """
            The payload is read from FILE, or from standard input when FILE is absent or "-".
            Without an apns-id header, a new random one is set so the outputs can be matched to it.
            """
    )

    @Option(help: "Kafka bootstrap servers, HOST:PORT[,HOST:PORT...].")
    var bootstrap: String

    @Option(help: "The device token (hexadecimal); the record's key.")
    var token: String

    @Option(help: "The apns-topic header: the app's bundle ID, plus the push type's suffix where it has one.")
    var topic: String

    @Option(name: .customLong("push-type"), help: "The apns-push-type header (alert, background, voip, ...).")
    var pushType: String?

    @Option(help: "The apns-priority header (10, 5 or 1).")
    var priority: String?

    @Option(name: .customLong("header"), help: "An extra header NAME=VALUE (repeatable), e.g. apns-collapse-id=abc.")
    var headers: [String] = []

    @Option(name: .customLong("requests-topic"), help: "The Kafka topic of requests.")
    var requestsTopic: String = "notifications.requests"

    @Argument(help: "The JSON payload file.")
    var file: String?

    func validate() throws {
        for header in headers where !header.contains("=") {
            throw ValidationError("--header takes NAME=VALUE; got \"\(header)\"")
        }
    }

    func run() async throws {
        let payload: Data
        if let file, file != "-" {
            do {
                payload = try NamedFile(role: "payload file", path: file, option: "the FILE argument").read()
            } catch {
                printError(error.description)
                throw ExitCode(1)
            }
        } else {
            payload = FileHandle.standardInput.readDataToEndOfFile()
        }

        var recordHeaders: [(String, String)] = [("apns-topic", topic)]
        if let pushType { recordHeaders.append(("apns-push-type", pushType)) }
        if let priority { recordHeaders.append(("apns-priority", priority)) }
        for header in headers {
            let parts = header.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            recordHeaders.append((String(parts[0]), String(parts[1])))
        }
        let apnsID: String
        if let given = recordHeaders.last(where: { $0.0.lowercased() == "apns-id" }) {
            apnsID = given.1
        } else {
            apnsID = UUID().uuidString.lowercased()
            recordHeaders.append(("apns-id", apnsID))
        }

        var logger = Logger(label: "notification-dispatcher.send")
        logger.logLevel = .warning
        let producer = try KafkaProducer(configuration: ProducerConfiguration(bootstrapServers: bootstrap), logger: logger)
        do {
            _ = try await producer.send(
                ProducerRecord(
                    topic: requestsTopic,
                    partition: nil,
                    key: Array(token.utf8),
                    value: Array(payload),
                    headers: recordHeaders.map { KafkaHeader(name: $0.0, value: Array($0.1.utf8)) }
                )
            )
        } catch {
            await producer.shutdown()
            printError("send failed: \(error)")
            throw ExitCode(1)
        }
        await producer.shutdown()
        print(apnsID)
    }
}
