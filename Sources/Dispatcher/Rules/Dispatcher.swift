public import Foundation
public import Notifications

/// Applies the delivery rules of SEMANTICS.md to one request record at a time: validation, expiry,
/// gating, routing and running service extensions under their deadline, the post-check, the app's
/// state, callbacks, launches, badge and presentation. It holds no Kafka and no mutable state, so
/// one value serves every concurrent request.
public struct Dispatcher: Sendable {
    /// The configuration it was built from.
    public let configuration: Configuration
    /// Validates records into requests (SEMANTICS sections 1 and 2).
    private let validator: RequestValidator
    /// Compiled apps by bundle ID.
    private let apps: [String: AppRoutes]
    /// The clock for `deliveredAt` and `dlq-failed-at`.
    private let now: @Sendable () -> Date

    /// Builds a dispatcher, checking every service extension step against `registry`.
    /// - Parameter now: the wall clock for `deliveredAt`/`dlq-failed-at` (tests pass a fixed one).
    /// - Throws: `ConfigurationError` for an unknown extension kind or options a kind refuses.
    public init(
        configuration: Configuration,
        registry: ExtensionRegistry,
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(ConfigurationError) {
        self.configuration = configuration
        self.validator = RequestValidator(
            profile: configuration.dispatch.profile, allowedBundleIDs: Set(configuration.apps.keys))
        var apps: [String: AppRoutes] = [:]
        for (bundleID, settings) in configuration.apps {
            apps[bundleID] = try AppRoutes(settings, registry: registry)
        }
        self.apps = apps
        self.now = now
    }

    /// Dispatches one record: its delivery (and launch) records, or its dead letter.
    /// - Parameters:
    ///   - record: the request as received.
    ///   - appStates: the app-states table (section 9).
    ///   - receivedAt: when the record was received; `apns-expiration` is compared with it.
    public func dispatch(
        _ record: RequestRecord, appStates: any AppStateLookup, receivedAt: Date
    ) async -> DispatchResult {
        switch validator.validate(record, receivedAt: receivedAt) {
        case .failure(let rejection):
            let deadLetter = DeadLetter(
                record: record, rejection: rejection, failedAt: now(), consumerGroup: configuration.kafka.groupId)
            return DispatchResult(.deadLettered(deadLetter), topics: configuration.topics)
        case .success(let request):
            let delivery = await deliver(request, appStates: appStates, receivedAt: receivedAt)
            return DispatchResult(.delivered(delivery), topics: configuration.topics)
        }
    }

    /// Decides the delivery of a valid request.
    private func deliver(_ request: NotificationRequest, appStates: any AppStateLookup, receivedAt: Date) async -> Delivery {
        let profile = configuration.dispatch.profile
        // MDM topics are MDM identifiers: no app settings apply to them.
        let app = request.pushType == .mdm ? nil : apps[request.bundleID]
        let appState =
            request.appStateOverride ?? appStates.appState(forDeviceToken: request.deviceToken)
            ?? app?.settings.defaultAppState ?? .notRunning
        let original = ValidatedContent(payload: request.payload)
        var delivery = Delivery(
            request: request, disposition: .discarded, reason: .expired, content: original, extensionReport: nil,
            presentation: nil, badgeEffect: .unchanged, appState: appState, appCallback: nil, launch: nil,
            deliveredAt: now())

        if let expiration = request.expiration, expiration < Int64(receivedAt.timeIntervalSince1970.rounded(.down)) {
            return delivery
        }

        let side = AppSideDecision.decide(
            pushType: request.pushType, profile: profile, state: appState,
            delegate: app?.settings.appDelegate ?? .fetchCompletionHandler, payload: request.payload)
        if side.discardsForceQuit {
            delivery.reason = .appForceQuit
            delivery.deliveredAt = now()
            return delivery
        }

        let (disposition, reason, content, report) = await modify(request, app: app)
        delivery.disposition = disposition
        delivery.reason = reason
        delivery.content = content
        delivery.extensionReport = report
        delivery.badgeEffect = content.payload.badgeEffect(profile: profile)
        delivery.presentation = presentation(of: content.payload, pushType: request.pushType, app: app)
        delivery.appCallback = side.callback
        delivery.launch = side.launch
        delivery.deliveredAt = now()
        return delivery
    }

    /// Gating (section 3), then the extension and the post-check (section 4).
    private func modify(
        _ request: NotificationRequest, app: AppRoutes?
    ) async -> (Disposition, DeliveryReason, ValidatedContent, ExtensionReport?) {
        let original = ValidatedContent(payload: request.payload)
        let payload = request.payload
        let gate: DeliveryReason? =
            if configuration.dispatch.profile == .legacy { .legacyProfile }
            else if request.pushType != .alert { .pushTypeNotModifiable }
            else if !payload.hasAlertText { .noAlert }
            else if !payload.mutableContent { .notMutable }
            else { nil }
        if let gate { return (.original, gate, original, nil) }
        guard let (chain, deadline) = app?.route(category: payload.category, defaultDeadline: configuration.dispatch.deadline)
        else { return (.original, .noExtension, original, nil) }

        let runner = ChainRunner(deadline: deadline, expiryGrace: configuration.dispatch.expiryGrace)
        let outcome = await runner.run(chain, request: request)
        var report = ExtensionReport(
            name: chain.name, category: payload.category, elapsed: outcome.elapsed, expired: false, outcome: .unchanged)
        let result: (Disposition, DeliveryReason, ValidatedContent)
        switch outcome.ending {
        case .finished(let content) where content.payload == original.payload && content.attachments.isEmpty:
            result = (.original, .extensionUnchanged, original)
        case .finished(let content):
            report.outcome = .modified
            result = (.modified, .extension, content)
        case .expired(let best):
            report.expired = true
            if let best {
                report.outcome = .expiredBestAttempt
                result = (.modified, .extensionExpiredBestAttempt, best)
            } else {
                report.outcome = .timeout
                result = (.original, .extensionTimeout, original)
            }
        case .failed(let step, let detail):
            report.outcome = .failed
            report.failure = "step \(step): \(detail)"
            result = (.original, .extensionFailed, original)
        }
        // Without alert text Apple ignores the modifications and shows the original.
        if result.0 == .modified, !result.2.payload.hasAlertText {
            report.outcome = .alertRemoved
            return (.original, .alertRemoved, original, report)
        }
        return (result.0, result.1, result.2, report)
    }

    /// The content extension presenting `payload` (section 7), nil when none.
    private func presentation(of payload: Payload, pushType: PushType, app: AppRoutes?) -> Presentation? {
        guard pushType == .alert, configuration.dispatch.profile == .modern, let category = payload.category else {
            return nil
        }
        return app?.presentations[category]
    }
}
