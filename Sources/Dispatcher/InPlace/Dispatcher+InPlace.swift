package import Foundation
import JSON
import Notifications
package import Records

extension Dispatcher {
    /// What ``decideInPlace(_:tables:now:into:)`` made of a request record lent in place.
    package enum InPlaceDecision: Sendable {
        /// Decided: its first output is written, and this is what it counts as and what follows.
        case decided(InPlaceDecided)
        /// Decided on an owned copy instead (``decide(_:tables:now:)``): it waits (a service
        /// extension, a Live Activity command, a stored notification, a broadcast), it changes
        /// state (`dispatch.tooManyRequests` counts it), or its payload or outputs need the owned
        /// path (a payload the parser must check, a payload that is not compact, a dead letter to
        /// cut, a feedback record to write, the legacy profile's `show-view`).
        case owned
    }

    /// A record decided in place.
    package struct InPlaceDecided: Sendable {
        /// What it counts as, as the owned result of the same record does.
        package var labels: DispatchResult.Labels
        /// The launch to write once its delivery is acknowledged (``writeLaunchInPlace(_:_:into:)``).
        package var launch: InPlaceLaunch?
        /// The bytes its outputs hold while in flight, measured as the owned result's are.
        package var outputBytes: Int
    }

    /// What a launch written after its delivery needs of the request (section 6).
    ///
    /// Plain values only, not the ``ValidatedRequest``: a record decided in place is moved
    /// several times between its decision and its end, and a request (its traits' category
    /// string, its payload reference) made each move a copy with retains, through `memcpy`.
    package struct InPlaceLaunch: Sendable {
        var trigger: LaunchTrigger
        var apnsID: MessageID
        var topic: ValidatedRequest.Topic
        var topicHeader: Int
        var traceparentHeader: Int?

        init(trigger: LaunchTrigger, request: ValidatedRequest) {
            self.trigger = trigger
            apnsID = request.apnsID
            topic = request.topic
            topicHeader = request.topicHeader
            traceparentHeader = request.traceparentHeader
        }
    }

    /// Decides a request where it lies, and writes its first output (its delivery, or its dead
    /// letter) into `output`: the same decision and the same bytes as ``decide(_:tables:now:)``
    /// on an owned copy of the record gives, without copying the record or making an object for
    /// it. Records that wait, change state, or need the owned path for their payload or their
    /// outputs come back as ``InPlaceDecision/owned``, with nothing changed.
    ///
    /// - Parameter now: the time of processing (section 11.1), `receivedAt` and `deliveredAt`.
    package func decideInPlace(
        _ record: borrowing RecordView, tables: StateTables, now: Date, into output: inout InPlaceOutput
    ) -> InPlaceDecision {
        // The legacy profile's app side reads `show-view`, which only the payload's tree has.
        guard configuration.dispatch.profile == .modern else { return .owned }
        switch validator.validateInPlace(record) {
        case .broadcast, .needsTree:
            return .owned
        case .rejected(let rejection):
            // A token's rejection also writes a feedback record (section 12.2): the owned path's.
            guard !rejection.reason.reportsTokenFeedback else { return .owned }
            return writeDeadLetter(record, rejection, at: now, into: &output)
        case .request(let request):
            return decideValid(record, request, tables: tables, now: now, into: &output)
        }
    }

    /// The rules of a valid request after validation, as ``prepare(_:tables:now:)`` and
    /// ``begin(_:record:tables:device:now:storedKey:)`` apply them, for the requests that wait for nothing.
    private func decideValid(
        _ record: borrowing RecordView, _ request: ValidatedRequest, tables: StateTables, now: Date,
        into output: inout InPlaceOutput
    ) -> InPlaceDecision {
        // Counting a request is a change of state that a replay after a refused output would make
        // twice; the owned path counts it once.
        guard tables.requestRates == nil, request.payload.isCompact else { return .owned }
        let device = record.withUnsafeKeyBytes { tables.devices.device(forKey: $0!) }
        if device != nil {
            let rejected = tokenRejection(pushType: request.pushType, bundleID: bundleID(of: request, in: record), device: device)
            // A token's rejection writes a feedback record too: the owned path's.
            if rejected != nil { return .owned }
        }
        let app: AppRoutes? =
            switch (request.pushType, request.topic) {
            case (.mdm, _): nil
            case (_, .known(let index)): appsByTopic[index]
            // Not a configured topic: an app is configured only when `apps` names it.
            case (_, .given): apps.isEmpty ? nil : apps[bundleID(of: request, in: record)]
            }
        let (appState, appStateSource) = AppStateSource.resolve(
            override: request.appStateOverride,
            fromTable: record.withUnsafeKeyBytes { tables.appStates.appState(forKey: $0!) },
            appDefault: app?.settings.defaultAppState)
        let traits = request.payload.traits
        let beginning = beginning(
            pushType: request.pushType, traits: traits, hidesViewButton: false, expiration: request.expiration, app: app,
            appState: appState, device: device, isStoredDelivery: false, now: now)
        var fields = DeliveryFields(
            disposition: .discarded, reason: .expired, completion: nil, appState: appState)
        switch beginning {
        case .stored, .liveActivity, .extensionNeeded:
            return .owned
        case .expired:
            break
        case .forceQuitDiscarded:
            fields.reason = .appForceQuit
        case .unmodified(let side, let reason, _):
            fields.disposition = .original
            fields.reason = reason
            fields.completion = completion(
                pushType: request.pushType, traits: traits, appState: appState, context: Context(side: side, app: app, device: device))
        }
        _ = appStateSource
        return writeDelivery(record, request, fields, now: now, into: &output)
    }

    /// The parts of a delivery decided in place that the request does not give.
    private struct DeliveryFields {
        var disposition: Disposition
        var reason: DeliveryReason
        /// What follows from the content shown; nil for a discarded delivery, which shows none.
        var completion: Completion?
        var appState: AppState
    }

    /// Writes a delivery (``DeliveryJSON/deliveryBytes(_:)``'s bytes) with its record's key and
    /// headers (the owned result's `messageHeaders`), when it fits the output limit.
    private func writeDelivery(
        _ record: borrowing RecordView, _ request: ValidatedRequest, _ fields: DeliveryFields, now: Date,
        into output: inout InPlaceOutput
    ) -> InPlaceDecision {
        output.begin(.delivery, to: .deliveries)
        record.withUnsafeKeyBytes { key in
            record.withUnsafeValueBytes { payload in
                withBundleID(of: request, in: record) { bundleID in
                    withCollapseID(of: request, in: record) { collapseID in
                        DeliveryJSON.writeHead(
                            to: &output.writer, apnsID: request.apnsID, deviceToken: key!, foldsToken: true, bundleID: bundleID,
                            pushType: request.pushType, priority: request.priority, collapseID: collapseID,
                            disposition: fields.disposition, reason: fields.reason)
                    }
                }
                // Compact (checked): its bytes are what the writer writes for it.
                output.writer.append(json: payload!.assumingMemoryBound(to: UInt8.self))
            }
        }
        let completion = fields.completion
        DeliveryJSON.writeTail(
            to: &output.writer, attachments: [], extensionReport: nil, presentation: completion?.presentation,
            badgeEffect: completion?.badgeEffect ?? .unchanged, appState: fields.appState, appCallback: completion?.appCallback,
            liveActivity: nil, channelID: nil, widgetReload: completion?.widgetReload, userAlert: completion?.userAlert,
            receivedAt: now, deliveredAt: now, timestamps: &output.timestamps)
        output.endValue()
        writeMessageKeyAndHeaders(record, apnsID: request.apnsID, traceparentHeader: request.traceparentHeader, into: &output)
        let size = output.size(of: record)
        guard size <= outputLimit.maxRecordBytes else { return .owned }
        let launch = completion?.launch.map { InPlaceLaunch(trigger: $0, request: request) }
        let labels = DispatchResult.Labels(
            outcome: .delivery(fields.disposition, fields.reason), launch: launch?.trigger, hasExtensionReport: false)
        // A launch is smaller than its delivery (it fits when the delivery does): flow control
        // holds its delivery's size for it until it is written.
        return .decided(InPlaceDecided(labels: labels, launch: launch, outputBytes: launch == nil ? size : 2 * size))
    }

    /// Writes the launch that follows a delivery decided in place (``DeliveryJSON/launchBytes(apnsID:deviceToken:bundleID:trigger:payload:)``'s
    /// bytes, the delivery's key and headers), once the delivery is acknowledged.
    package func writeLaunchInPlace(_ record: borrowing RecordView, _ launch: InPlaceLaunch, into output: inout InPlaceOutput) {
        output.begin(.launch, to: .launches)
        record.withUnsafeKeyBytes { key in
            record.withUnsafeValueBytes { payload in
                launch.apnsID.withUTF8 { apnsID in
                    withBundleID(topic: launch.topic, header: launch.topicHeader, in: record) { bundleID in
                        DeliveryJSON.writeLaunchHead(
                            to: &output.writer, apnsID: apnsID, deviceToken: key!, foldsToken: true, bundleID: bundleID,
                            trigger: launch.trigger)
                    }
                }
                output.writer.append(json: payload!.assumingMemoryBound(to: UInt8.self))
            }
        }
        output.writer.append("}}")
        output.endValue()
        writeMessageKeyAndHeaders(record, apnsID: launch.apnsID, traceparentHeader: launch.traceparentHeader, into: &output)
    }

    /// A delivery's or launch's key (the lowercase token) and headers (`apns-id`, `traceparent`).
    private func writeMessageKeyAndHeaders(
        _ record: borrowing RecordView, apnsID: MessageID, traceparentHeader: Int?, into output: inout InPlaceOutput
    ) {
        let key = record.withUnsafeKeyBytes { key in
            let start = output.writer.count
            output.writer.write(upTo: key!.count) { room in
                DeviceToken.writeLowercased(key!, to: room.baseAddress!)
                return key!.count
            }
            return start..<output.writer.count
        }
        output.key = .written(key)
        let apnsIDRange = output.append(apnsID)
        output.headers.append(.written(name: "apns-id", value: apnsIDRange))
        if let traceparent = traceparentHeader {
            output.headers.append(.recordValue(name: "traceparent", header: traceparent))
        }
    }

    /// Writes a dead letter whole (the record's key, value and headers, its `apns-id` when it has
    /// none, and the `dlq-*` headers: ``DeadLetter/outputRecord(topic:limit:extent:)``'s record),
    /// when it fits the output limit; one to cut goes the owned way.
    private func writeDeadLetter(
        _ record: borrowing RecordView, _ rejection: Rejection, at failedAt: Date, into output: inout InPlaceOutput
    ) -> InPlaceDecision {
        output.begin(.deadLetter, to: .deadLetter)
        var hasMessageID = false
        for index in 0..<record.headerCount {
            output.headers.append(.record(header: index))
            if !hasMessageID { hasMessageID = record.withUnsafeHeaderBytes(index) { name, _ in DeadLetter.isMessageIDName(name) } }
        }
        if !hasMessageID {
            let derived = record.withUnsafeTopicBytes { MessageID.derived(topicBytes: $0, partition: record.partition, offset: record.offset) }
            let range = output.append(derived)
            output.headers.append(.written(name: "apns-id", value: range))
        }
        for header in DeadLetter.dlqHeaders(rejection: rejection, source: record.position, consumerGroup: configuration.kafka.groupId, failedAt: failedAt) {
            output.headers.append(.written(name: header.name, value: output.append(header.value)))
        }
        let size = output.size(of: record)
        guard size <= outputLimit.maxRecordBytes else { return .owned }
        let labels = DispatchResult.Labels(outcome: .deadLetter(rejection.reason, withFeedback: false), launch: nil, hasExtensionReport: false)
        return .decided(InPlaceDecided(labels: labels, launch: nil, outputBytes: size))
    }

    /// Calls `body` with the request's bundle ID: a configured topic's, or the first bytes of its
    /// `apns-topic` header.
    private func withBundleID<Result>(
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
    private func bundleID(of request: ValidatedRequest, in record: borrowing RecordView) -> String {
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

extension InPlaceOutput {
    /// The output's size as ``OutputLimit`` measures an output record: from the lengths of its
    /// parts, without lending them (``withLent(from:_:)`` builds the producer's header list,
    /// which the record's produce builds again).
    func size(of record: borrowing RecordView) -> Int {
        func length(_ source: Source, record: UnsafeRawBufferPointer?) -> Int {
            switch source {
            case .written(let range): range.count
            case .record: record?.count ?? 0
            }
        }
        let keyBytes = record.withUnsafeKeyBytes { length(key, record: $0) }
        let valueBytes = record.withUnsafeValueBytes { length(value, record: $0) }
        var headerBytes = 0
        for header in headers {
            switch header {
            case .written(let name, let value):
                headerBytes += name.utf8CodeUnitCount + value.count
            case .recordValue(let name, let position):
                headerBytes += name.utf8CodeUnitCount + record.withUnsafeHeaderBytes(position) { _, value in value?.count ?? 0 }
            case .record(let position):
                headerBytes += record.withUnsafeHeaderBytes(position) { name, value in name.count + (value?.count ?? 0) }
            }
        }
        return OutputLimit.size(keyBytes: keyBytes, valueBytes: valueBytes, headerBytes: headerBytes, headers: headers.count)
    }

}
