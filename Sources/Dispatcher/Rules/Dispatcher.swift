public import Foundation
public import Logging
public import Notifications
import Records

/// Applies the delivery rules of SEMANTICS.md to one request record at a time: validation, expiry,
/// gating, routing and running service extensions under their deadline, the post-check, the app's
/// state, callbacks, launches, badge and presentation; and the rules of section 10 to one response
/// record at a time (``respond(_:appStates:receivedAt:)``). It holds no Kafka and no mutable state,
/// so one value serves every concurrent record.
public struct Dispatcher: Sendable {
    /// The configuration it was built from.
    public let configuration: Configuration
    /// Validates records into requests (SEMANTICS sections 1 and 2).
    let validator: RequestValidator
    /// Validates records into responses (section 10), up to the checks that need the apps.
    let responseValidator: ResponseValidator
    /// Compiled apps by bundle ID.
    let apps: [String: AppRoutes]
    /// The compiled app of each configured topic, by its index among the validator's topics: a
    /// request decided in place finds its app without hashing its bundle ID.
    let appsByTopic: [AppRoutes?]
    /// The clock for `deliveredAt` and `dlq-failed-at`.
    let now: @Sendable () -> Date
    /// The largest output record (`kafka.maxMessageBytes`).
    package let outputLimit: OutputLimit
    /// Where extension failures are logged.
    fileprivate let extensionFailures: ExtensionFailureLog

    /// Builds a dispatcher, checking every service extension step against `registry`.
    /// - Parameters:
    ///   - now: the wall clock for `deliveredAt`/`dlq-failed-at` (tests pass a fixed one).
    ///   - extensionFailures: where failed extension steps are logged (by default a warning
    ///     at most once a minute per app, category and step, on the `notification-dispatcher` logger).
    /// - Throws: `ConfigurationError` for an unknown extension kind or options a kind refuses.
    public init(
        configuration: Configuration,
        registry: ExtensionRegistry,
        now: @escaping @Sendable () -> Date = { Date() },
        extensionFailures: ExtensionFailureLog = ExtensionFailureLog(logger: Logger(label: "notification-dispatcher"))
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.validator = RequestValidator(
            profile: configuration.dispatch.profile, allowedBundleIDs: Set(configuration.apps.keys))
        self.responseValidator = ResponseValidator(allowedBundleIDs: Set(configuration.apps.keys))
        var apps: [String: AppRoutes] = [:]
        for (bundleID, settings) in configuration.apps {
            apps[bundleID] = try AppRoutes(settings, registry: registry)
        }
        self.apps = apps
        let topics = validator.knownTopics
        self.appsByTopic = (0..<topics.count).map { apps[topics[$0].bundleID] }
        self.now = now
        self.outputLimit = OutputLimit(maxRecordBytes: configuration.kafka.maxMessageBytes)
        self.extensionFailures = extensionFailures
    }

    /// Dispatches one record: its delivery (and launch) records, or its dead letter (and feedback record).
    /// - Parameters:
    ///   - record: the request as received.
    ///   - tables: the state tables (section 11.2) and the request counts (section 12.3).
    ///   - now: the time of processing (section 11.1): `receivedAt`, `deliveredAt`, expiry and the 429 window.
    package func dispatch(_ record: RequestRecord, tables: StateTables, now: Date) async -> DispatchResult {
        switch prepare(record, tables: tables, now: now) {
        case .decided(let result): result
        case .extensionNeeded(let pending): await pending.run()
        case .activity(let work): execute(work, tables: tables, now: now)
        }
    }

    /// Dispatches one record with only an app-states table (no devices table, no request limit).
    /// - Parameter receivedAt: the time of processing (section 11.1).
    public func dispatch(
        _ record: RequestRecord, appStates: any AppStateLookup, receivedAt: Date
    ) async -> DispatchResult {
        await dispatch(record, tables: StateTables(appStates: appStates), now: receivedAt)
    }

    /// Whether `record` is a user's response (section 10): it comes from the responses topic;
    /// every other record is a request.
    package func isResponse(_ record: RequestRecord) -> Bool {
        record.source.topic == configuration.topics.responses
    }

    /// Decides any record by where it comes from: a response with
    /// ``respond(_:appStates:receivedAt:)``, a request with ``dispatch(_:tables:now:)``.
    package func decide(_ record: RequestRecord, tables: StateTables, now: Date) async -> DispatchResult {
        if isResponse(record) { return respond(record, appStates: tables.appStates, receivedAt: now) }
        return await dispatch(record, tables: tables, now: now)
    }

    /// ``decide(_:tables:now:)`` with only an app-states table.
    public func decide(_ record: RequestRecord, appStates: any AppStateLookup, receivedAt: Date) async -> DispatchResult {
        await decide(record, tables: StateTables(appStates: appStates), now: receivedAt)
    }

    /// The dead letter of a valid request whose outputs the brokers refused for good (or kept
    /// failing past the retry limit): reason `OutputRejected`, `detail` saying which output and
    /// why (docs/worker.md, "Failures").
    /// - Parameter tooLarge: whether the output was refused for its size (status 413, else 500).
    package func outputRejected(_ record: RequestRecord, detail: String, tooLarge: Bool) -> DispatchResult {
        deadLettered(record, Rejection(.outputRejected, detail, status: tooLarge ? 413 : nil))
    }

    /// The dead letter of an invalid request or response (section 5), made to fit the output limit,
    /// with its feedback record for the token reasons (section 12.2).
    /// - Parameter failedAt: the time of processing (`dlq-failed-at`, the feedback's `reportedAt`);
    ///   the dispatcher's clock by default.
    func deadLettered(
        _ record: RequestRecord, _ rejection: Rejection, at failedAt: Date? = nil, addedMessageID: String? = nil
    ) -> DispatchResult {
        var deadLetter = DeadLetter(
            record: record, rejection: rejection, failedAt: failedAt ?? now(), consumerGroup: configuration.kafka.groupId)
        deadLetter.addedMessageID = addedMessageID
        return DispatchResult(.deadLettered(deadLetter), topics: configuration.topics, limit: outputLimit)
    }

    /// What a valid request comes to before any extension runs: the rules of sections 11.1 (expiry),
    /// 16.1 (store and forward), 14 (Live Activities), 6 (the app's side), 3 (gating) and 4
    /// (routing), on what they read of the request (``rules(_:_:tables:device:now:receivedAt:storedKey:)``).
    enum Beginning {
        /// Expired before processing: discarded (section 11.1).
        case expired
        /// Its device is offline: stored for later (section 16.1).
        case stored
        /// A Live Activity push: a command against its activity (section 14).
        case liveActivity
        /// A silent push to a force-quit app: discarded (section 6).
        case forceQuitDiscarded(AppSideDecision)
        /// Delivered as it came, for `reason` (a gating reason, or no extension on its route).
        case unmodified(AppSideDecision, DeliveryReason, route: ExtensionRoute?)
        /// The route's extension runs before the delivery is decided.
        case extensionNeeded(AppSideDecision, AppRoutes.Route)
    }

    /// Decides a valid request's ``Beginning``.
    /// - Parameters:
    ///   - hidesViewButton: the alert's legacy `show-view` is false (read only in the legacy
    ///     profile). A stored flag of the payload's traits: a plain value, not an autoclosure,
    ///     whose context would copy the traits (a category string's retain) for every request.
    ///   - isStoredDelivery: the request is a stored notification delivered because its device came
    ///     back online (section 16.3): it is not stored again.
    func beginning(
        pushType: PushType, traits: Payload.Traits, hidesViewButton: Bool, expiration: Int64?,
        app: AppRoutes?, appState: AppState, device: DeviceEntry?, isStoredDelivery: Bool, now: Date
    ) -> Beginning {
        if let expiration, expiration < Int64(now.timeIntervalSince1970.rounded(.down)) { return .expired }
        if !isStoredDelivery, let device, !device.online { return .stored }
        if pushType == .liveactivity, configuration.dispatch.profile == .modern { return .liveActivity }
        // The user's notification settings (section 20): the defaults for a token without an entry.
        let settings = device?.settings ?? .defaults
        let side = AppSideDecision.decide(
            pushType: pushType, profile: configuration.dispatch.profile, state: appState,
            delegate: app?.settings.appDelegate ?? .fetchCompletionHandler, traits: traits, settings: settings,
            hidesViewButton: hidesViewButton)
        if side.discardsForceQuit { return .forceQuitDiscarded(side) }
        if let gate = GatingRule.firstApplying(pushType: pushType, traits: traits, profile: configuration.dispatch.profile, settings: settings) {
            return .unmodified(side, gate.reason, route: nil)
        }
        let route = AppRoutes.route(
            app, category: traits.category, defaultDeadline: configuration.dispatch.deadline,
            defaultMemoryLimit: configuration.dispatch.extensionMemoryLimit)
        guard route.chain != nil else { return .unmodified(side, .noExtension, route: route.decision) }
        return .extensionNeeded(side, route)
    }

    /// Completes a delivery with what the gate or the extension made of its content, made to fit
    /// the output limit: a modified delivery too large to write is delivered with the original
    /// content instead (reason `output-too-large`, as Apple shows the original when an extension
    /// fails), and one that does not fit even so becomes an `OutputRejected` dead letter.
    ///
    /// `delivery` is consumed: passed on as the last use, its storage stays unshared and
    /// ``decide(_:_:_:)`` completes it in place instead of copying it.
    fileprivate func finish(
        _ delivery: consuming Delivery, _ modification: Modification, _ context: Context, record: RequestRecord
    ) -> DispatchResult {
        // Only a modified delivery has a smaller alternative; every other result is measured once, in `fitted`.
        guard modification.disposition == .modified else {
            return fitted(decide(delivery, modification, context), record: record)
        }
        let result = decide(copy delivery, modification, context)
        guard !result.fits(outputLimit) else { return fitted(result, record: record) }
        var original = modification
        original.disposition = .original
        original.reason = .outputTooLarge
        original.content = ValidatedContent(payload: delivery.request.payload)
        original.report?.outcome = .outputTooLarge
        return fitted(decide(delivery, original, context), record: record)
    }

    /// `result` when its outputs fit the output limit, else the record's `OutputRejected` dead letter.
    func fitted(_ result: DispatchResult, record: RequestRecord) -> DispatchResult {
        guard let oversized = result.outputs.first(where: { !outputLimit.fits($0) }) else { return result }
        return outputRejected(
            record,
            detail: "The \(oversized.kind.description) record would take \(OutputLimit.size(of: oversized)) bytes, "
                + "over the output limit of \(outputLimit.maxRecordBytes) bytes (kafka.maxMessageBytes).",
            tooLarge: true)
    }

    /// The delivery with what the gate or the extension made of its content.
    func decide(_ delivery: consuming Delivery, _ modification: Modification, _ context: Context) -> DispatchResult {
        delivery.disposition = modification.disposition
        delivery.reason = modification.reason
        delivery.content = modification.content
        delivery.extensionReport = modification.report
        delivery.settings = context.device?.settings
        delivery.ledger = context.ledger?.verdict
        // Filtered by the extension (section 13): nothing is shown, so nothing follows from it.
        guard modification.disposition != .discarded else {
            return DispatchResult(.delivered(delivery), topics: configuration.topics, limit: outputLimit)
        }
        let completion = completion(
            pushType: delivery.request.pushType, traits: modification.content.payload.traits, appState: delivery.appState,
            context: context)
        if let ledger = context.ledger {
            // The ledger follows the delivered content's badge, whatever set it (section 21.3);
            // a ledger full for a new key keeps no count (the increment's badge was shown).
            let counted = ledger.verdict.delivered(effect: completion.badgeEffect, traits: modification.content.payload.traits)
            if counted.changes,
                ledger.badges?.set(
                    counted.key, to: counted.after, updatedAt: Timestamp.milliseconds(delivery.deliveredAt), decidedBy: ledger.position,
                    before: counted.before) == false
            {
                delivery.ledger = ledger.verdict
            } else {
                delivery.ledger = counted
            }
        }
        delivery.userAlert = completion.userAlert
        delivery.badgeEffect = completion.badgeEffect
        delivery.widgetReload = completion.widgetReload
        delivery.presentation = completion.presentation
        delivery.appCallback = completion.appCallback
        delivery.launch = completion.launch
        return DispatchResult(.delivered(delivery), topics: configuration.topics, limit: outputLimit)
    }

    /// What follows from the content a delivery shows (sections 6, 7, 17 and 18): what the user
    /// sees, the badge, a widget's reload, the content extension, the app's callback and launch.
    /// Every delivery is completed with it, decided at once or after its extension.
    struct Completion: Sendable {
        var userAlert: UserAlert?
        var badgeEffect: BadgeEffect
        var widgetReload: Bool?
        var presentation: Presentation?
        var appCallback: AppCallback?
        var launch: LaunchTrigger?
    }

    /// The ``Completion`` of a delivery of `pushType` showing content with `traits`.
    func completion(pushType: PushType, traits: Payload.Traits, appState: AppState, context: Context) -> Completion {
        let profile = configuration.dispatch.profile
        let userAlert = UserAlertRule.decide(
            traits: traits, pushType: pushType, profile: profile, appState: appState, app: context.app, device: context.device)
        // An MDM push never reaches an app (section 6), so it leaves the badge as it is.
        let badgeEffect = pushType == .mdm ? .unchanged : traits.badgeEffect(profile: profile)
        return Completion(
            userAlert: userAlert,
            badgeEffect: UserAlertRule.badgeEffect(
                badgeEffect, userAlert: userAlert, traits: traits, pushType: pushType, profile: profile,
                settings: context.device?.settings ?? .defaults),
            widgetReload: UserAlertRule.widgetReload(traits: traits, pushType: pushType, profile: profile),
            presentation: presentation(category: traits.category, pushType: pushType, app: context.app),
            appCallback: context.side.callback,
            launch: context.side.launch)
    }

    /// What is decided of a valid request before gating, and read again when its delivery is
    /// completed: the app's side, the app's settings and the device's devices-table entry.
    struct Context: Sendable {
        let side: AppSideDecision
        let app: AppRoutes?
        let device: DeviceEntry?
        /// The badge ledger of an app that keeps one (section 21), when the delivery is decided
        /// after its extension: what it held before, and the table that follows the delivery.
        var ledger: LedgerContext? = nil
    }

    /// The ledger a delivery decided after its extension follows (section 21.3).
    struct LedgerContext: Sendable {
        var verdict: BadgeLedgerVerdict
        var badges: BadgesTable?
        /// The record that caused the delivery (a record decided again counts once).
        var position: RequestRateWindow.RecordPosition
    }

    /// The content extension presenting a payload of `category` (section 7), nil when none.
    private func presentation(category: String?, pushType: PushType, app: AppRoutes?) -> Presentation? {
        guard pushType == .alert, configuration.dispatch.profile == .modern, let category else {
            return nil
        }
        return app?.presentations[category]
    }
}

/// How far ``Dispatcher/prepare(_:appStates:receivedAt:)`` got with a record.
package enum DispatchStep: Sendable {
    /// The record is decided: no service extension runs for it.
    case decided(DispatchResult)
    /// A service extension must run before the record is decided.
    case extensionNeeded(PendingExtension)
    /// A Live Activity push or a valid broadcast (SEMANTICS sections 14 and 15): commands to
    /// execute in order, each against the activity of its token
    /// (``Dispatcher/execute(_:tables:now:)``), then the record's own
    /// trailing outputs.
    case activity(ActivityWork)
}

/// A valid request routed to a service extension: everything decided before the extension runs,
/// and the chain to run (section 4).
///
/// One reference to its parts: a worker keeps one of these in the async frame of every record
/// waiting on an extension (up to `maxInFlight` at once), where a kilobyte of inline fields
/// copied into several frame slots added up to about 20 KB per record.
package struct PendingExtension: Sendable {
    /// What the extension's run needs, decided before it.
    final class Parts: Sendable {
        let dispatcher: Dispatcher
        let request: NotificationRequest
        /// The request as received, for its dead letter should its outputs not fit.
        let record: RequestRecord
        let context: Dispatcher.Context
        let delivery: Delivery
        let chain: ExtensionChain
        let runner: ChainRunner

        init(
            dispatcher: Dispatcher, request: NotificationRequest, record: RequestRecord, context: Dispatcher.Context,
            delivery: Delivery, chain: ExtensionChain, runner: ChainRunner
        ) {
            self.dispatcher = dispatcher
            self.request = request
            self.record = record
            self.context = context
            self.delivery = delivery
            self.chain = chain
            self.runner = runner
        }
    }

    private let parts: Parts

    init(_ parts: Parts) {
        self.parts = parts
    }

    /// Runs the chain under its deadline (and the expiry grace), applies the post-check and
    /// decides the delivery. Cancelling the caller counts as the deadline passing.
    package func run() async -> DispatchResult {
        decide(after: await parts.runner.run(parts.chain, request: parts.request))
    }

    /// Starts the chain in a task of its own and calls `completion` once with the decided
    /// delivery, when the chain ends or, at the latest, when its deadline and grace passed.
    ///
    /// Nothing waits meanwhile: a worker with thousands of records waiting on webhooks holds, for
    /// each, only the chain's task and this value (docs/performance.md, "Extensions: memory").
    package func start(_ completion: @escaping @Sendable (DispatchResult) -> Void) {
        parts.runner.start(parts.chain, request: parts.request) { outcome in
            completion(self.decide(after: outcome))
        }
    }

    /// Logs a failed step, then decides the delivery after the chain.
    private func decide(after outcome: ChainOutcome) -> DispatchResult {
        // The only place a failed or stopped step ends up besides the delivery's reason: seen in the log.
        switch outcome.ending {
        case .failed(let step, _, let kind):
            parts.dispatcher.extensionFailures.record(
                app: parts.request.bundleID, category: parts.request.payload.category, step: step, kind: kind)
        case .memoryLimit(let stop):
            parts.dispatcher.extensionFailures.record(
                app: parts.request.bundleID, category: parts.request.payload.category, step: stop.step,
                kind: ExtensionMemoryLimitExceeded.kindName)
        case .finished, .expired:
            break
        }
        return parts.dispatcher.finish(parts.delivery, modification(after: outcome), parts.context, record: parts.record)
    }

    /// What the chain's outcome makes of the content, after the post-check.
    private func modification(after outcome: ChainOutcome) -> Modification {
        let request = parts.request
        let chain = parts.chain
        let original = ValidatedContent(payload: request.payload)
        var report = ExtensionReport(
            name: chain.name, category: request.payload.category, elapsed: outcome.elapsed, expired: false, outcome: .unchanged)
        let result: Modification
        switch outcome.ending {
        case .finished(let content) where content.payload == original.payload && content.attachments.isEmpty:
            result = Modification(disposition: .original, reason: .extensionUnchanged, content: original, report: report)
        case .finished(let content):
            report.outcome = .modified
            result = Modification(disposition: .modified, reason: .extension, content: content, report: report)
        case .expired(let best):
            report.expired = true
            if let best {
                report.outcome = .expiredBestAttempt
                result = Modification(disposition: .modified, reason: .extensionExpiredBestAttempt, content: best, report: report)
            } else {
                report.outcome = .timeout
                result = Modification(disposition: .original, reason: .extensionTimeout, content: original, report: report)
            }
        case .failed(let step, let detail, _):
            report.outcome = .failed
            report.failure = "step \(step): \(detail)"
            result = Modification(disposition: .original, reason: .extensionFailed, content: original, report: report)
        case .memoryLimit(let stop):
            // Stopped as the system kills an extension over its memory limit (section 22): the
            // original is shown, nothing was handed over, so it is never filtered either.
            report.outcome = .memoryLimit
            report.memoryStop = stop
            report.failure = "step \(stop.step): the chain reached \(stop.heldBytes) bytes, over its memory limit of \(stop.limitBytes) bytes"
            result = Modification(disposition: .original, reason: .extensionMemoryLimit, content: original, report: report)
        }
        // Without alert text Apple ignores the modifications and shows the original, unless the
        // app has the filtering entitlement: then nothing is shown (section 13).
        if result.disposition == .modified, !result.content.payload.hasAlertText {
            if parts.context.app?.settings.entitlements.contains(.filtering) == true {
                report.outcome = .filtered
                return Modification(disposition: .discarded, reason: .extensionFiltered, content: original, report: report)
            }
            report.outcome = .alertRemoved
            return Modification(disposition: .original, reason: .alertRemoved, content: original, report: report)
        }
        return result
    }
}

/// What gating or an extension made of a request's content.
struct Modification {
    var disposition: Disposition
    var reason: DeliveryReason
    var content: ValidatedContent
    var report: ExtensionReport?

    /// The same, for another reason.
    func because(_ reason: DeliveryReason) -> Modification {
        var copy = self
        copy.reason = reason
        return copy
    }
}
