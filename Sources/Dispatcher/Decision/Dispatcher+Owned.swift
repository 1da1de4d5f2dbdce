package import Foundation
package import Notifications
import Records

extension Dispatcher {
    /// Dispatches an owned request record as far as it goes without waiting: the one decision
    /// (``verdict(_:tables:now:)``) on a view of the record, its outputs written by the one writer
    /// and copied, with what was decided described (``DispatchResult/decision``); or what still
    /// waits: a service extension to run, Live Activity commands to execute, a notification
    /// stored, a broadcast fanned out (``proceed(_:record:tables:now:)``).
    ///
    /// Offline `dispatch`, `explain` and the tests decide every record this way; the worker does
    /// the same on librdkafka's bytes (``decide(_:tables:now:into:)``) and comes here only for a
    /// record that waits or whose output was refused. Records of one token must be prepared in
    /// order: the request limit counts them as they are accepted.
    package func prepare(_ record: RequestRecord, tables: StateTables, now: Date) -> DispatchStep {
        let decided: OwnedDecision = record.withView { view in
            written(verdict(view, tables: tables, now: now), record: record, view: view, now: now)
        }
        switch decided {
        case .written(let outputs, let decision): return .decided(DispatchResult(decision, outputs: outputs))
        case .waits(let wait): return proceed(wait, record: record, tables: tables, now: now)
        }
    }

    /// ``prepare(_:tables:now:)`` with only an app-states table.
    package func prepare(_ record: RequestRecord, appStates: any AppStateLookup, receivedAt: Date) -> DispatchStep {
        prepare(record, tables: StateTables(appStates: appStates), now: receivedAt)
    }

    /// A verdict on a record's view, written: its outputs copied and what they describe.
    private enum OwnedDecision {
        case written([OutputRecord], DispatchResult.Decision)
        case waits(RequestWait)
    }

    /// Writes what `verdict` decided now into outputs of their own, and describes it.
    private func written(_ verdict: RequestVerdict, record: RequestRecord, view: borrowing RecordView, now: Date) -> OwnedDecision {
        var output = OutputBuffer()
        switch verdict {
        case .waits(let wait):
            return .waits(wait)
        case .deadLetter(let rejection):
            let written = writeDeadLetter(view, rejection, at: now, into: &output)
            let outputs = outputRecords(written, of: view, output: &output)
            return .written(outputs, .deadLettered(DeadLetter(record: record, rejection: rejection, failedAt: now, consumerGroup: configuration.kafka.groupId)))
        case .delivery(let request, let delivery):
            let (written, wrote) = writeDelivery(view, request, delivery, now: now, into: &output)
            var outputs = outputRecords(written, of: view, output: &output)
            switch wrote {
            case .outputRejected(let rejection, let failedAt):
                return .written(outputs, .deadLettered(DeadLetter(record: record, rejection: rejection, failedAt: failedAt, consumerGroup: configuration.kafka.groupId)))
            case .delivery:
                if let key = delivery.storedKey {
                    outputs.append(storedTombstone(key, apnsID: request.apnsID, traceparent: request.traceparentHeader.flatMap { record.headers[$0].value }))
                }
                return .written(outputs, .delivered(described(request, delivery, record: record, now: now)))
            }
        }
    }

    /// The first output in `output` and those that follow it, copied.
    private func outputRecords(_ written: Written, of view: borrowing RecordView, output: inout OutputBuffer) -> [OutputRecord] {
        var records = [output.outputRecord(of: view, topics: configuration.topics)]
        for index in 0..<written.following.count {
            writeFollowing(written.following[index], of: view, into: &output)
            records.append(output.outputRecord(of: view, topics: configuration.topics))
        }
        return records
    }

    /// The ``Delivery`` a verdict describes, for those who read the decision (offline tools,
    /// `explain`, tests): the request's strings made from the owned record.
    private func described(_ request: ValidatedRequest, _ verdict: DeliveryVerdict, record: RequestRecord, now: Date) -> Delivery {
        let notification = request.request(of: record, topics: validator.knownTopics, receivedAt: verdict.receivedAt)
        let completion = verdict.completion
        var delivery = Delivery(
            request: notification, disposition: verdict.disposition, reason: verdict.reason,
            content: ValidatedContent(payload: notification.payload), extensionReport: nil, presentation: completion?.presentation,
            badgeEffect: completion?.badgeEffect ?? .unchanged, appState: verdict.appState, appStateSource: verdict.appStateSource,
            appCallback: completion?.appCallback, launch: completion?.launch, deliveredAt: now, route: verdict.route,
            appSideRule: verdict.appSideRule, userAlert: completion?.userAlert, widgetReload: completion?.widgetReload,
            storedKey: verdict.storedKey)
        delivery.settings = verdict.settings
        // The badge ledger (section 21) as the delivery record carries it: its count (`badgeCount`)
        // and, unless discarded, the payload with the increment's badge written in. Without them
        // the decision told `explain` and embedders another payload and no count (found by the
        // fuzzer: docs/testing.md, "Fuzzing").
        if let ledger = verdict.ledger {
            delivery.ledger = ledger
            if verdict.disposition != .discarded, let badge = ledger.inserted {
                delivery.content = ValidatedContent(payload: notification.payload.withBadge(badge))
            }
        }
        return delivery
    }

    /// Goes on with a request that waits, from what the rules decided before the wait, on the
    /// record's owned copy (the one copy a waiting record keeps): its service extension to run,
    /// its Live Activity command, its storing (section 16.1), or a broadcast's validation and
    /// fan-out (section 15).
    package func proceed(_ wait: RequestWait, record: RequestRecord, tables: StateTables, now: Date) -> DispatchStep {
        guard var validated = wait.request else {
            switch validator.validateAny(record, receivedAt: now) {
            case .broadcast(let broadcast): return prepareBroadcast(broadcast, record: record, tables: tables, now: now)
            case .rejectedBroadcast(let rejection), .rejectedRequest(let rejection): return .decided(broadcastDeadLetter(record, rejection, at: now))
            case .request: preconditionFailure("a broadcast validated as a device request")
            }
        }
        var request = validated.request(of: record, topics: validator.knownTopics, receivedAt: wait.receivedAt)
        // The increment's badge is in the payload the extension gets (section 21.2).
        if let badge = wait.ledger?.inserted, case .serviceExtension = wait.kind {
            request.payload = request.payload.withBadge(badge)
            validated.payload.traits = request.payload.traits
        }
        // `deliveredAt` is the `now` of the record that caused the delivery: this one (section 11.1).
        var draft = Delivery(
            request: request, disposition: .discarded, reason: .expired, content: ValidatedContent(payload: request.payload),
            extensionReport: nil, presentation: nil, badgeEffect: .unchanged, appState: wait.appState, appStateSource: wait.appStateSource,
            appCallback: nil, launch: nil, deliveredAt: now)
        draft.storedKey = wait.storedKey
        switch wait.kind {
        case .store:
            return .decided(storeOrDrop(draft, record: record, tables: tables, now: now))
        case .liveActivity:
            let command = ActivityCommand(request: request, record: record, appState: wait.appState, appStateSource: wait.appStateSource)
            let trailing = wait.storedKey.map { [storedTombstone($0, apnsID: request.apnsID, traceparent: request.traceparentBytes)] } ?? []
            return .activity(ActivityWork(commands: [command], trailing: trailing))
        case .broadcast:
            preconditionFailure("a broadcast waits without a request")
        case .serviceExtension(let side, let route, let app, let device):
            draft.appSideRule = side.rule
            draft.route = route.decision
            guard let chain = route.chain else { preconditionFailure("an extension route without a chain") }
            var context = Context(side: side, app: app, device: device)
            context.ledger = wait.ledger.map {
                LedgerContext(
                    verdict: $0, badges: tables.badges,
                    position: RequestRateWindow.RecordPosition(partition: record.source.partition, offset: record.source.offset))
            }
            return .extensionNeeded(
                PendingExtension(
                    PendingExtension.Parts(
                        dispatcher: self, request: request, record: record, context: context,
                        delivery: draft, chain: chain,
                        runner: ChainRunner(
                            deadline: route.decision.deadline, expiryGrace: configuration.dispatch.expiryGrace,
                            memoryLimit: route.decision.memoryLimit))))
        }
    }

    /// Decides a stored notification being delivered because its device came back online
    /// (section 16.3) with the rules of every request, as if it arrived `now`: the record rebuilt
    /// from it (its headers as received, its payload), its own identifier and time of receipt.
    /// The token checks and the request limit ran when it arrived and are not repeated.
    func deliverStored(_ notification: StoredNotification, key: String, device: DeviceEntry?, tables: StateTables, now: Date, source: TopicPartitionOffset) -> DispatchStep {
        let record = RequestRecord(
            key: Array(notification.deviceToken.utf8), headers: notification.headers, value: notification.payload.serialized(),
            source: source)
        let decided: OwnedDecision? = record.withView { view in
            guard
                let request = validator.storedRequest(
                    view, pushType: notification.pushType, priority: notification.priority, apnsID: notification.apnsID,
                    expiration: notification.expiration, bundleID: notification.bundleID, traits: notification.payload.traits)
            else { return nil }
            let verdict = rules(
                request, view, app: app(of: request, in: view), tables: tables, device: device, now: now,
                receivedAt: notification.receivedAt, storedKey: key)
            return written(verdict, record: record, view: view, now: now)
        }
        switch decided {
        case .written(let outputs, let decision): return .decided(DispatchResult(decision, outputs: outputs))
        case .waits(let wait): return proceed(wait, record: record, tables: tables, now: now)
        case nil:
            // Headers without an apns-topic: not a notification the dispatcher stored. It is
            // discarded as one that can no longer be delivered.
            var delivery = discardedDelivery(of: notification, reason: .expired, source: source, tables: tables, now: now)
            delivery.storedKey = key
            return .decided(fitted(DispatchResult(.delivered(delivery), topics: configuration.topics), record: record))
        }
    }
}
