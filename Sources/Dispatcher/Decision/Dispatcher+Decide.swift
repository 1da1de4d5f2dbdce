package import Foundation
import JSON
import Notifications
package import Records

extension Dispatcher {
    /// What ``decide(_:tables:now:into:)`` made of a request record.
    package enum Decided: Sendable {
        /// Its outputs are known: the first is written, and this is what it counts as and what follows.
        case written(Written)
        /// It waits (a service extension, the stored table, a Live Activity, a broadcast): the
        /// caller keeps a copy of the record and goes on with ``proceed(_:record:tables:now:)``.
        case waits(RequestWait)
    }

    /// A request whose outputs are known: its first output is written.
    package struct Written: Sendable {
        /// What it counts as.
        package var labels: DispatchResult.Labels
        /// The outputs that follow the first once that is acknowledged, in order.
        package var following = FollowingOutputs()
        /// The bytes its outputs hold while in flight, measured as ``OutputLimit`` measures them.
        package var outputBytes: Int
    }

    /// An output that follows a request's first once that is acknowledged (section 19's order).
    ///
    /// Plain values only: a record whose outputs are in flight is moved several times between its
    /// decision and its end, and a request's strings or payload reference would make each move a
    /// copy with retains.
    package enum FollowingOutput: Sendable {
        /// The launch after a delivery (section 6).
        case launch(LaunchFacts)
        /// The badges record after a delivery that changed a device's badge (section 21.3).
        case badges(BadgeFacts)
        /// The feedback record after a token's dead letter (section 12.2).
        case feedback(FeedbackFacts)
    }

    /// The outputs that follow a request's first: at most two (a launch, then a badges record),
    /// kept inline rather than in an array of their own.
    package struct FollowingOutputs: Sendable {
        private var first: FollowingOutput?
        private var second: FollowingOutput?

        /// None.
        init() {}

        /// Whether none follows.
        package var isEmpty: Bool { first == nil }

        /// How many follow.
        package var count: Int { first == nil ? 0 : second == nil ? 1 : 2 }

        /// Adds `output` after those there are.
        mutating func append(_ output: FollowingOutput) {
            if first == nil { first = output } else { second = output }
        }

        /// The output at `index` (0 or 1), in order.
        package subscript(index: Int) -> FollowingOutput { (index == 0 ? first : second)! }
    }

    /// What a launch written after its delivery needs of the request.
    package struct LaunchFacts: Sendable {
        var trigger: LaunchTrigger
        var apnsID: MessageID
        var topic: ValidatedRequest.Topic
        var topicHeader: Int
        var traceparentHeader: Int?
        var form: JSONForm
        /// The badge a ledger's increment wrote into the delivered payload (section 21.2).
        var insertedBadge: Int?
    }

    /// What a badges record written after its delivery needs of the request (section 21.3).
    package struct BadgeFacts: Sendable {
        var count: Int
        var updatedAt: Int64
        var apnsID: MessageID
        var topic: ValidatedRequest.Topic
        var topicHeader: Int
        var traceparentHeader: Int?
    }

    /// What a feedback record needs besides the record: the dead letter's reason and when.
    package struct FeedbackFacts: Sendable {
        var reason: RejectionReason
        var status: Int
        var timestamp: Int64?
        var reportedAt: Date
    }

    /// Decides a request record where it lies (``verdict(_:tables:now:)``) and, when its outputs
    /// are known now, writes the first (its delivery, or its dead letter) into `output`: nothing
    /// of the record is copied and no object is made for it. A record that waits comes back as
    /// ``Decided/waits(_:)`` with nothing written.
    ///
    /// - Parameter now: the time of processing (section 11.1), `receivedAt` and `deliveredAt`.
    ///
    /// The verdict of ``verdict(_:tables:now:)``, taken step by step: the validated request is
    /// read where validation left it and the delivery's verdict is filled in place, so that
    /// neither is copied (with the retains of their strings) on the way to the writer.
    package func decide(_ record: borrowing RecordView, tables: StateTables, now: Date, into output: inout OutputBuffer) -> Decided {
        // The payload's whitespace, noted as validation steps over it, so that the delivery drops
        // it with a copy per run rather than a second walk over the bytes.
        var whitespace = output.whitespaceRuns
        switch validator.validateInPlace(record, recording: &whitespace) {
        case .broadcast:
            return .waits(RequestWait(kind: .broadcast, request: nil, receivedAt: now))
        case .rejected(let rejection):
            return .written(writeDeadLetter(record, rejection, at: now, into: &output))
        case .request(let request):
            var delivery = DeliveryVerdict(receivedAt: now)
            switch checkedRules(request, record, tables: tables, now: now, into: &delivery) {
            case .delivery:
                return .written(writeDelivery(record, request, delivery, now: now, whitespace: whitespace, into: &output).written)
            case .deadLetter(let rejection): return .written(writeDeadLetter(record, rejection, at: now, into: &output))
            case .waits(let wait): return .waits(wait)
            }
        }
    }

    /// Writes an output that follows a record's first (``Written/following``).
    package func writeFollowing(_ following: FollowingOutput, of record: borrowing RecordView, into output: inout OutputBuffer) {
        switch following {
        case .launch(let launch): writeLaunch(record, launch, into: &output)
        case .badges(let badge): writeBadges(record, badge, into: &output)
        case .feedback(let feedback):
            DeadLetter.writeFeedback(
                record, reason: feedback.reason, status: feedback.status, timestamp: feedback.timestamp, reportedAt: feedback.reportedAt,
                limit: outputLimit, into: &output)
        }
    }

    // MARK: Deliveries

    /// What was written for a delivery: the delivery, or, when it would not fit the output
    /// limit, the request's `OutputRejected` dead letter in its place.
    enum DeliveryWrite {
        case delivery
        /// The dead letter written instead, and when it failed (the dispatcher's clock).
        case outputRejected(Rejection, failedAt: Date)
    }

    /// Writes a delivery (section 5) of the request's own payload, compacted from its bytes,
    /// with its record's key and headers, when it fits the output limit; otherwise the request's
    /// `OutputRejected` dead letter.
    ///
    /// - Parameter whitespace: where the payload's whitespace lies, when its validation noted it
    ///   (``WhitespaceRuns``).
    func writeDelivery(
        _ record: borrowing RecordView, _ request: ValidatedRequest, _ verdict: DeliveryVerdict, now: Date,
        whitespace: WhitespaceRuns = .none, into output: inout OutputBuffer
    ) -> (written: Written, wrote: DeliveryWrite) {
        output.begin(.delivery, to: .deliveries)
        let completion = verdict.completion
        // A discarded delivery carries the payload as received (section 21.2).
        let insertedBadge = verdict.disposition == .discarded ? nil : verdict.ledger?.inserted
        record.withUnsafeKeyBytes { key in
            withBundleID(of: request, in: record) { bundleID in
                withCollapseID(of: request, in: record) { collapseID in
                    let head = DeliveryJSON.Head(
                        apnsID: request.apnsID, deviceToken: key ?? UnsafeRawBufferPointer(start: nil, count: 0), foldsToken: true,
                        bundleID: bundleID, pushType: request.pushType, priority: request.priority, collapseID: collapseID,
                        disposition: verdict.disposition, reason: verdict.reason)
                    let tail = DeliveryJSON.Tail(
                        attachments: [], extensionReport: nil, presentation: completion?.presentation,
                        badgeEffect: completion?.badgeEffect ?? .unchanged, badgeCount: verdict.ledger?.after, appState: verdict.appState,
                        appCallback: completion?.appCallback, liveActivity: nil, channelID: nil, widgetReload: completion?.widgetReload,
                        userAlert: completion?.userAlert, receivedAt: verdict.receivedAt, deliveredAt: now)
                    record.withUnsafeValueBytes { payload in
                        DeliveryJSON.write(
                            head,
                            payload: .bytes(
                                payload.map { $0.assumingMemoryBound(to: UInt8.self) }, request.payload.form, whitespace: whitespace,
                                insertedBadge: insertedBadge),
                            tail, to: &output.writer, timestamps: &output.timestamps)
                    }
                }
            }
        }
        output.endValue()
        writeMessageKeyAndHeaders(
            record, apnsID: DeliveryJSON.apnsIDText, traceparentHeader: request.traceparentHeader, into: &output)
        let size = output.size(of: record)
        guard size <= outputLimit.maxRecordBytes else {
            let rejection = Rejection(
                .outputRejected,
                "The delivery record would take \(size) bytes, over the output limit of \(outputLimit.maxRecordBytes) bytes (kafka.maxMessageBytes).",
                status: 413)
            // Refused after the decision, as a produce failure is: at the dispatcher's clock.
            let failedAt = self.now()
            return (writeDeadLetter(record, rejection, at: failedAt, into: &output), .outputRejected(rejection, failedAt: failedAt))
        }
        var written = Written(labels: verdict.labels, outputBytes: size)
        if let trigger = completion?.launch {
            written.following.append(
                .launch(
                    LaunchFacts(
                        trigger: trigger, apnsID: request.apnsID, topic: request.topic, topicHeader: request.topicHeader,
                        traceparentHeader: request.traceparentHeader, form: request.payload.form, insertedBadge: insertedBadge)))
            // A launch is smaller than its delivery (it fits when the delivery does): flow control
            // holds its delivery's size for it until it is written.
            written.outputBytes += size
        }
        if let ledger = verdict.ledger, ledger.changes {
            written.following.append(
                .badges(
                    BadgeFacts(
                        count: ledger.after, updatedAt: Timestamp.milliseconds(now), apnsID: request.apnsID, topic: request.topic,
                        topicHeader: request.topicHeader, traceparentHeader: request.traceparentHeader)))
            written.outputBytes += OutputLimit.size(keyBytes: ledger.key.utf8.count, valueBytes: 64, headerBytes: 200, headers: 2)
        }
        return (written, .delivery)
    }

    /// Writes the launch that follows a delivery (section 5's launch record: its delivery's key
    /// and headers), once the delivery is acknowledged.
    private func writeLaunch(_ record: borrowing RecordView, _ launch: LaunchFacts, into output: inout OutputBuffer) {
        output.begin(.launch, to: .launches)
        record.withUnsafeKeyBytes { key in
            record.withUnsafeValueBytes { payload in
                launch.apnsID.withUTF8 { apnsID in
                    withBundleID(topic: launch.topic, header: launch.topicHeader, in: record) { bundleID in
                        DeliveryJSON.writeLaunchHead(
                            to: &output.writer, apnsID: apnsID, deviceToken: key ?? UnsafeRawBufferPointer(start: nil, count: 0),
                            foldsToken: true, bundleID: bundleID, trigger: launch.trigger)
                    }
                }
                let start = output.writer.count
                output.writer.appendCompact(json: payload.map { $0.assumingMemoryBound(to: UInt8.self) } ?? UnsafeBufferPointer(start: nil, count: 0), form: launch.form)
                if let badge = launch.insertedBadge {
                    output.writer.insert(member: "badge", integer: badge, intoObject: "aps", writtenFrom: start)
                }
            }
        }
        output.writer.append("}}")
        output.endValue()
        writeMessageKeyAndHeaders(
            record, apnsID: DeliveryJSON.apnsIDText, traceparentHeader: launch.traceparentHeader, into: &output)
    }

    /// Writes the badges record that follows a delivery whose badge changed (section 21.3): keyed
    /// `<token>/<bundle ID>`, `{"count", "updatedAt"}`, with the delivery's `apns-id` and
    /// `traceparent`, to the partition of the request (the badges topic is co-partitioned with the
    /// requests topic: the worker that owns a token's requests owns its count).
    private func writeBadges(_ record: borrowing RecordView, _ badge: BadgeFacts, into output: inout OutputBuffer) {
        output.begin(.badge, to: .badges)
        BadgesTable.write(count: badge.count, updatedAt: badge.updatedAt, to: &output.writer)
        output.endValue()
        let keyStart = output.writer.count
        record.withUnsafeKeyBytes { key in
            let key = key ?? UnsafeRawBufferPointer(start: nil, count: 0)
            output.writer.write(upTo: key.count) { room in
                DeviceToken.writeLowercased(key, to: room.baseAddress!)
                return key.count
            }
        }
        output.writer.append(byte: UInt8(ascii: "/"))
        withBundleID(topic: badge.topic, header: badge.topicHeader, in: record) { output.writer.append(bytes: UnsafeRawBufferPointer($0)) }
        output.key = .written(keyStart..<output.writer.count)
        let apnsID = output.append(badge.apnsID)
        output.headers.append(.written(name: "apns-id", value: apnsID))
        if let traceparent = badge.traceparentHeader {
            output.headers.append(.recordValue(name: "traceparent", header: traceparent))
        }
        output.partition = record.partition
    }

    /// A delivery's or launch's key (the lowercase token) and headers (`apns-id`, `traceparent`).
    /// - Parameter apnsID: where the value has the identifier's text: the header's value is the
    ///   same bytes (written once).
    private func writeMessageKeyAndHeaders(
        _ record: borrowing RecordView, apnsID apnsIDRange: Range<Int>, traceparentHeader: Int?, into output: inout OutputBuffer
    ) {
        let key = record.withUnsafeKeyBytes { key in
            let key = key ?? UnsafeRawBufferPointer(start: nil, count: 0)
            let start = output.writer.count
            output.writer.write(upTo: key.count) { room in
                DeviceToken.writeLowercased(key, to: room.baseAddress!)
                return key.count
            }
            return start..<output.writer.count
        }
        output.key = .written(key)
        output.headers.append(.written(name: "apns-id", value: apnsIDRange))
        if let traceparent = traceparentHeader {
            output.headers.append(.recordValue(name: "traceparent", header: traceparent))
        }
    }

    // MARK: Dead letters and feedback

    /// Writes a request's dead letter (section 5: the record's key, value and headers, its
    /// `apns-id` when it has none, and the `dlq-*` headers), cut to fit the output limit when it
    /// would not (``DeadLetter/Extent``).
    /// - Returns: what it counts as and, for the token reasons, the feedback record that follows.
    func writeDeadLetter(
        _ record: borrowing RecordView, _ rejection: Rejection, at failedAt: Date, addedMessageID: String? = nil,
        extent: DeadLetter.Extent = .fitted, into output: inout OutputBuffer
    ) -> Written {
        let size = DeadLetter.write(
            record, rejection, at: failedAt, consumerGroup: configuration.kafka.groupId, addedMessageID: addedMessageID, extent: extent,
            limit: outputLimit, into: &output)
        let feedback = rejection.reason.reportsTokenFeedback
        let labels = DispatchResult.Labels(outcome: .deadLetter(rejection.reason, withFeedback: feedback), launch: nil, hasExtensionReport: false)
        var written = Written(labels: labels, outputBytes: size)
        if feedback {
            written.following.append(
                .feedback(FeedbackFacts(reason: rejection.reason, status: rejection.status, timestamp: rejection.timestamp, reportedAt: failedAt)))
            written.outputBytes += size
        }
        return written
    }

    // MARK: The request's parts where they lie

    /// Calls `body` with the request's bundle ID: a configured topic's, or the first bytes of its
    /// `apns-topic` header.
    func withBundleID<Result>(
        of request: ValidatedRequest, in record: borrowing RecordView, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        withBundleID(topic: request.topic, header: request.topicHeader, in: record, body)
    }

    /// ``withBundleID(of:in:_:)`` of a topic validated as `topic`, its header at `header`.
    private func withBundleID<Result>(
        topic: ValidatedRequest.Topic, header: Int, in record: borrowing RecordView, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        switch topic {
        case .known(let index):
            return validator.knownTopics.withBundleID(at: index, body)
        case .given(let bundleIDLength):
            return record.withUnsafeHeaderBytes(header) { _, value in
                body(UnsafeRawBufferPointer(rebasing: value![..<bundleIDLength]).assumingMemoryBound(to: UInt8.self))
            }
        }
    }

    /// The request's bundle ID as a string (a devices-table check or an unconfigured app's lookup).
    func bundleID(of request: ValidatedRequest, in record: borrowing RecordView) -> String {
        withBundleID(of: request, in: record) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with the request's `apns-collapse-id` (nil when it has none).
    private func withCollapseID<Result>(
        of request: ValidatedRequest, in record: borrowing RecordView, _ body: (UnsafeBufferPointer<UInt8>?) -> Result
    ) -> Result {
        guard let position = request.collapseIDHeader else { return body(nil) }
        return record.withUnsafeHeaderBytes(position) { _, value in body(value!.assumingMemoryBound(to: UInt8.self)) }
    }
}
