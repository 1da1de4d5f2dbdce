import Dispatcher
import Foundation
import JSON
import Notifications
import Records

/// Builds the stages of a ``RequestExplanation`` (and, in `ExplanationStages+Responses.swift`, of a
/// ``ResponseExplanation``) from what the dispatcher decided: each stage reads a decision the
/// dispatcher recorded and adds the facts and sentences it rests on.
struct ExplanationStages {
    /// The configuration the dispatcher ran with.
    let configuration: Configuration
    /// The request or response as received.
    let record: RequestRecord

    private typealias Line = ExplanationStep.Line

    /// The stages of a valid request's delivery, in the order the rules ran them; a stage the
    /// rules never reached (gating for an expired request) is left out.
    func steps(of delivery: Delivery) -> [ExplanationStep] {
        var steps = [
            validation(ValidationCheck.self, failed: nil), pushType(delivery.request),
            appState(delivery.appState, source: delivery.appStateSource, bundleID: delivery.request.bundleID), discard(delivery),
        ]
        if delivery.reason == .notStored { steps.append(notStored()) }
        // Discarded before gating (expired, force-quit); filtered by its extension (section 13) it
        // went through gating, routing and the extension like any other.
        guard delivery.disposition != .discarded || delivery.reason == .extensionFiltered else {
            if delivery.appSideRule != nil { steps.append(appSide(delivery)) }
            return steps
        }
        steps.append(gating(delivery))
        if let route = delivery.route { steps.append(routing(route, request: delivery.request)) }
        if let report = delivery.extensionReport { steps.append(serviceExtension(report, delivery: delivery)) }
        steps.append(appSide(delivery))
        steps.append(presentation(delivery))
        if let report = delivery.liveActivity { steps.append(liveActivity(report, delivery: delivery)) }
        return steps
    }

    /// The stages of a dead letter: validation against `checks` and, when every check passed
    /// (`OutputRejected`), the outputs that could not be written.
    func steps<Check: ExplainedCheck>(of rejection: Rejection, checks: Check.Type) -> [ExplanationStep] {
        var steps = [validation(checks, failed: rejection)]
        if Check.failed(rejection) == nil { steps.append(outputsRejected(rejection)) }
        return steps
    }

    /// A dead letter's outcome: in one line, and as data.
    static func outcome(of rejection: Rejection) -> (summary: String, facts: JSONObject) {
        (
            "Dead letter: \(rejection.reason.rawValue) (status \(rejection.status)). \(rejection.detail)",
            [
                "kind": "dead-letter", "reason": .string(rejection.reason.rawValue), "status": .number(JSONNumber(rejection.status)),
                "detail": .string(rejection.detail),
            ]
        )
    }

    // MARK: Validation

    /// Validation: every check of `checks` in order, the failed one with its reason, those after
    /// it not run.
    func validation<Check: ExplainedCheck>(_ checks: Check.Type, failed rejection: Rejection?) -> ExplanationStep {
        let failedCheck = rejection.flatMap(Check.failed)
        var lines: [Line] = []
        var failedAlready = false
        for check in Check.allCases {
            if failedAlready {
                lines.append(Line(.notReached, "\(check.summary): not checked"))
            } else if check == failedCheck, let rejection {
                lines.append(Line(.decided, "\(check.summary): \(rejection.reason.rawValue): \(rejection.detail)"))
                failedAlready = true
            } else {
                lines.append(Line(.passed, check.summary + note(on: check)))
            }
        }
        guard let rejection, let failedCheck else {
            return ExplanationStep(
                .validation, title: "Validation", verdict: "passed all \(Check.allCases.count) checks", lines: lines,
                facts: ["passed": true], citations: [Check.order])
        }
        return ExplanationStep(
            .validation, title: "Validation",
            verdict: "failed: \(rejection.reason.rawValue) (status \(rejection.status)); one dead letter, nothing else", lines: lines,
            facts: [
                "passed": false, "failedCheck": .string(failedCheck.rawValue), "reason": .string(rejection.reason.rawValue),
                "status": .number(JSONNumber(rejection.status)), "detail": .string(rejection.detail),
            ],
            citations: [failedCheck.rule, Check.order, Check.deadLetter])
    }

    /// Why a passed check passed trivially, when it did.
    private func note(on check: some ExplainedCheck) -> String {
        guard check.isTopicAllowed, configuration.apps.isEmpty else { return "" }
        return " (apps lists none: every topic is allowed)"
    }

    /// A valid request or response whose outputs do not fit the output limit.
    func outputsRejected(_ rejection: Rejection) -> ExplanationStep {
        ExplanationStep(
            .outputs, title: "Outputs", verdict: "the record is valid, but its outputs cannot be written: \(rejection.reason.rawValue)",
            lines: [Line(.decided, rejection.detail)],
            facts: ["reason": .string(rejection.reason.rawValue), "detail": .string(rejection.detail)],
            citations: [.outputRejected])
    }

    // MARK: Push type

    /// The push type (given or inferred), the priority and the payload's size against its limit.
    func pushType(_ request: NotificationRequest) -> ExplanationStep {
        let profile = configuration.dispatch.profile
        let limit = request.pushType.payloadLimit(profile: profile)
        let bytes = record.value?.count ?? 0
        let priorityGiven = request.headers.contains { $0.name.lowercased() == "apns-priority" && $0.value != nil }
        let pushTypeFrom = request.pushTypeWasGiven ? "the apns-push-type header" : "inferred: the request has no apns-push-type header"
        var lines = [
            Line(.note, "push type \(request.pushType.rawValue) (\(pushTypeFrom))"),
            Line(.note, "priority \(request.priority.rawValue) (\(priorityGiven ? "the apns-priority header" : "the default"))"),
            Line(.note, "payload \(bytes) of the \(limit) bytes allowed for push type \(request.pushType.rawValue) in the \(profile.rawValue) profile"),
            Line(
                .note,
                request.pushType == .mdm
                    ? "topic \(request.topic): an MDM identifier"
                    : "topic \(request.topic): bundle ID \(request.bundleID)"
                        + (configuration.apps[request.bundleID] == nil ? ", not configured under apps" : ", configured under apps")),
            Line(.note, "apns-id \(request.apnsID) (\(request.apnsIDWasGiven ? "the apns-id header" : "derived from the record's topic, partition and offset"))"),
        ]
        if let collapseID = request.collapseID { lines.append(Line(.note, "apns-collapse-id \(collapseID)")) }
        var citations: [Citation] = []
        if !request.pushTypeWasGiven { citations.append(.pushTypeInference) }
        if !priorityGiven { citations.append(.priority) }
        return ExplanationStep(
            .pushType, title: "Push type",
            verdict: "\(request.pushType.rawValue)\(request.pushTypeWasGiven ? "" : " (inferred)"), priority \(request.priority.rawValue)",
            lines: lines,
            facts: [
                "pushType": .string(request.pushType.rawValue), "inferred": .bool(!request.pushTypeWasGiven),
                "priority": .number(JSONNumber(request.priority.rawValue)), "priorityGiven": .bool(priorityGiven),
                "payloadBytes": .number(JSONNumber(bytes)), "payloadLimit": .number(JSONNumber(limit)),
                "bundleId": .string(request.bundleID),
            ],
            citations: citations)
    }

    // MARK: App state

    /// The app's state and where it came from (the app's `bundleID`, for its `defaultAppState`).
    func appState(_ state: AppState, source: AppStateSource, bundleID: String) -> ExplanationStep {
        let from = source == .appDefault ? "apps[\"\(bundleID)\"].defaultAppState" : source.summary
        return ExplanationStep(
            .appState, title: "App state", verdict: "\(state.rawValue) (from \(from))",
            facts: ["state": .string(state.rawValue), "source": .string(source.rawValue)],
            citations: [.appStateSources])
    }

    // MARK: Discarding

    /// Expiry, then a silent push to a force-quit app: the two ways a valid request is discarded.
    func discard(_ delivery: Delivery) -> ExplanationStep {
        let request = delivery.request
        var lines: [Line] = []
        var citations: [Citation] = []
        let expiration = request.expiration.map { seconds in
            "apns-expiration \(seconds) (\(Timestamp.rfc3339(Date(timeIntervalSince1970: TimeInterval(seconds)))))"
        }
        switch (delivery.reason, expiration) {
        case (.expired, let expiration?):
            lines.append(Line(.decided, "\(expiration) is earlier than the time of processing: discarded (expired)"))
            lines.append(Line(.notReached, "force-quit: not checked"))
            citations = [.expiration, .discarded]
        case (_, let expiration?):
            lines.append(Line(.passed, "\(expiration) has not passed"))
        case (_, nil):
            lines.append(Line(.passed, "no apns-expiration (or 0): the notification does not expire"))
        }
        if delivery.reason == .appForceQuit {
            lines.append(Line(.decided, "a silent push (content-available 1, no alert text, badge or sound) to a force-quit app: discarded (app-force-quit)"))
            citations = [.row(of: .forceQuitSilent), .discarded]
        } else if delivery.reason != .expired {
            lines.append(
                Line(.passed, delivery.appState == .forceQuit ? "the app is force-quit, but the push is not silent" : "the app is not force-quit"))
        }
        let discarded = delivery.disposition == .discarded && delivery.reason != .extensionFiltered
        return ExplanationStep(
            .discard, title: "Expiry and force-quit",
            verdict: discarded ? "discarded (\(delivery.reason.rawValue))" : "not discarded", lines: lines,
            facts: ["discarded": .bool(discarded), "expiration": request.expiration.map { .number(JSONNumber(Int($0))) } ?? .null],
            citations: citations)
    }

    // MARK: Gating

    /// The gating rules in order: those that did not apply, the one that did, those not reached.
    func gating(_ delivery: Delivery) -> ExplanationStep {
        let decidedBy = GatingRule.allCases.first { $0.reason == delivery.reason }
        let (lines, results) = Self.firstMatch(
            GatingRule.allCases, decided: decidedBy, verbs: ("applies", "does not apply"),
            label: { "\($0.number). \($0.rawValue)" },
            unreachedLabel: { "\($0.number). \($0.rawValue) (\($0.condition))" }, fact: { fact(for: $0, delivery) })
        let rules: [JSONValue] = zip(GatingRule.allCases, results).map {
            ["rule": .string($0.rawValue), "number": .string($0.number), "result": .string($1)]
        }
        let verdict =
            decidedBy.map { "rule \($0.number) \($0.rawValue) applies: no service extension runs, the original is delivered" }
            ?? "no rule applies: the service extension runs"
        var citations = [Citation.gatingOrder]
        switch decidedBy {
        case .legacyProfile?: citations.append(.legacyProfile)
        case .pushTypeNotModifiable?: citations.append(.alertCondition)
        case .noAlert?: citations.append(.cannotModifySilent)
        case .notAuthorized?: citations += [.notAuthorizedGate, .unauthorizedPresentsNothing]
        case .alertsOff?: citations += [.alertsOffGate, .alertsOffShowsNothing]
        case .notMutable?: citations.append(.mutableContentCondition)
        case .noExtension?: citations.append(.routing)
        case nil: citations.append(.serviceExtensionConditions)
        }
        return ExplanationStep(
            .gating, title: "Gating (may a service extension run?)", verdict: verdict, lines: lines,
            facts: ["decidedBy": decidedBy.map { .string($0.rawValue) } ?? .null, "rules": .array(rules)], citations: citations)
    }

    /// A table the rules try in order, the first row that applies deciding (gating; who handles a
    /// response): a line per row, ✓ for each row before `decided` with the fact it read, → for
    /// `decided`, – for the rows after it; and each row's result as data, in the table's own verbs
    /// (`applies`, `does-not-apply`, `not-reached`).
    static func firstMatch<Row: Equatable>(
        _ rows: [Row], decided: Row?, verbs: (match: String, noMatch: String),
        label: (Row) -> String, unreachedLabel: (Row) -> String, fact: (Row) -> String
    ) -> (lines: [ExplanationStep.Line], results: [String]) {
        var lines: [Line] = []
        var results: [String] = []
        var reached = true
        for row in rows {
            if !reached {
                lines.append(Line(.notReached, "\(unreachedLabel(row)): not reached"))
                results.append("not-reached")
            } else if row == decided {
                lines.append(Line(.decided, "\(label(row)): \(verbs.match), \(fact(row))"))
                results.append(verbs.match.replacingOccurrences(of: " ", with: "-"))
                reached = false
            } else {
                lines.append(Line(.passed, "\(label(row)): \(verbs.noMatch), \(fact(row))"))
                results.append(verbs.noMatch.replacingOccurrences(of: " ", with: "-"))
            }
        }
        return (lines, results)
    }

    /// The fact a gating rule read, for a person.
    private func fact(for rule: GatingRule, _ delivery: Delivery) -> String {
        let payload = delivery.request.payload
        switch rule {
        case .legacyProfile: return "the profile is \(configuration.dispatch.profile.rawValue)"
        case .pushTypeNotModifiable: return "the push type is \(delivery.request.pushType.rawValue)"
        case .noAlert: return payload.hasAlertText ? "the payload has alert text" : "the payload has no alert text"
        case .notAuthorized:
            return "the user's authorization is \((delivery.settings ?? .defaults).authorization.rawValue)\(Self.settingsOrigin(delivery))"
        case .alertsOff:
            return "the app's alerts are \((delivery.settings ?? .defaults).alerts ? "on" : "off")\(Self.settingsOrigin(delivery))"
        case .notMutable: return payload.mutableContent ? "aps.mutable-content is 1" : "aps.mutable-content is not 1"
        case .noExtension:
            guard let name = delivery.route?.chainName else { return "routing found no service extension (below)" }
            return "routing found the service extension \(name) (below)"
        }
    }

    /// Where the user's settings came from, when the token has no devices entry: the defaults.
    static func settingsOrigin(_ delivery: Delivery) -> String {
        delivery.settings == nil ? " (the token has no devices entry: the default)" : " (the token's devices entry)"
    }

    // MARK: Routing

    /// Which service extension routing chose, from which setting, and its deadline.
    func routing(_ route: ExtensionRoute, request: NotificationRequest) -> ExplanationStep {
        let app = configuration.apps[request.bundleID]
        let category = request.payload.category
        var lines = [
            Line(.note, app == nil ? "app \(request.bundleID): not configured under apps" : "app \(request.bundleID)"),
            Line(.note, category.map { "category \($0) (aps.category)" } ?? "no category (the payload has no aps.category)"),
        ]
        let steps: [ExtensionStep]
        let choice: String
        switch route.choice {
        case .category(let name):
            steps = Self.steps(of: app?.categories[name]?.serviceExtension)
            choice = "categories.\(name).serviceExtension"
        case .app:
            steps = Self.steps(of: app?.serviceExtension)
            choice = "the app's serviceExtension" + (category.map { " (category \($0) sets none of its own)" } ?? "")
        case .categoryOptedOut(let name):
            steps = []
            choice = "categories.\(name).serviceExtension is none: the category opts out of the app's extension"
        case .appHasNone:
            steps = []
            choice = "neither the category nor the app sets a serviceExtension"
        case .appNotConfigured:
            steps = []
            choice = request.pushType == .mdm ? "mdm pushes use no app settings" : "the app is not configured, so it has no serviceExtension"
        }
        lines.append(Line(route.hasExtension ? .decided : .note, choice))
        var facts: JSONObject = [
            "app": .string(request.bundleID), "category": category.map { .string($0) } ?? .null,
            "choice": .string(Self.name(of: route.choice)), "serviceExtension": route.chainName.map { .string($0) } ?? .null,
        ]
        guard let chainName = route.chainName else {
            return ExplanationStep(
                .routing, title: "Routing", verdict: "no service extension (gating rule 5, no-extension)", lines: lines, facts: facts,
                citations: [.routing])
        }
        lines.append(Line(.note, "steps, in order: " + steps.map { "\($0.name) (kind \($0.kind))" }.joined(separator: ", then ")))
        let deadlineFrom =
            switch route.deadlineSource {
            case .category(let name): "categories.\(name).deadline"
            case .app: "apps[\"\(request.bundleID)\"].deadline"
            case .dispatch: "dispatch.deadline"
            }
        let grace = DurationText.spell(configuration.dispatch.expiryGrace)
        lines.append(Line(.note, "deadline \(DurationText.spell(route.deadline)) (\(deadlineFrom)), then \(grace) of expiry grace (dispatch.expiryGrace)"))
        let memoryFrom =
            switch route.memoryLimitSource {
            case .category(let name): "categories.\(name).extensionMemoryLimit"
            case .app: "apps[\"\(request.bundleID)\"].extensionMemoryLimit"
            case .dispatch: "dispatch.extensionMemoryLimit"
            }
        lines.append(Line(.note, "memory limit \(ByteSizeText.spell(route.memoryLimit)) (\(memoryFrom))"))
        facts["steps"] = .array(steps.map { ["name": .string($0.name), "kind": .string($0.kind)] })
        facts["deadlineMs"] = .number(JSONNumber(Int(route.deadline.wholeMilliseconds)))
        facts["deadlineFrom"] = .string(deadlineFrom)
        facts["memoryLimitBytes"] = .number(JSONNumber(route.memoryLimit))
        facts["memoryLimitFrom"] = .string(memoryFrom)
        return ExplanationStep(
            .routing, title: "Routing", verdict: "\(chainName), deadline \(DurationText.spell(route.deadline))", lines: lines,
            facts: facts, citations: [.routing, .deadline, .timeLimit, .memoryLimit])
    }

    /// The steps of a `serviceExtension` setting (none for `none` or nil).
    private static func steps(of setting: ServiceExtensionSetting?) -> [ExtensionStep] {
        if case .chain(let steps)? = setting { return steps }
        return []
    }

    /// A route's choice as data.
    private static func name(of choice: ExtensionRoute.Choice) -> String {
        switch choice {
        case .category: "category"
        case .app: "app"
        case .categoryOptedOut: "category-opted-out"
        case .appHasNone: "app-has-none"
        case .appNotConfigured: "app-not-configured"
        }
    }

    // MARK: The service extension

    /// What the extension run came to: time, changed paths, expiry, failure and the post-check.
    func serviceExtension(_ report: ExtensionReport, delivery: Delivery) -> ExplanationStep {
        var lines = [Line(.note, "ran \(report.name) for \(report.elapsedMilliseconds) ms\(report.expired ? ": the deadline passed" : ", within its deadline")")]
        let changes =
            delivery.disposition == .modified
            ? PayloadChange.changes(from: delivery.request.payload.json, to: delivery.content.payload.json) : []
        if !changes.isEmpty { lines.append(Line(.note, "changed " + changes.map(\.description).joined(separator: ", "))) }
        if delivery.disposition == .modified, !delivery.content.attachments.isEmpty {
            lines.append(Line(.note, "added \(delivery.content.attachments.count) attachment(s)"))
        }
        if let stop = report.memoryStop {
            lines.append(
                Line(
                    .decided,
                    "stopped in step \(stop.step): the chain reached \(stop.heldBytes) bytes, over its memory limit of \(ByteSizeText.spell(stop.limitBytes))"))
        } else if let failure = report.failure {
            lines.append(Line(.decided, "failed: \(failure)"))
        }
        let verdict: String
        let citations: [Citation]
        switch report.outcome {
        case .modified:
            verdict = "finished in time and changed the content: delivered modified (extension)"
            citations = [.modifyContent]
        case .unchanged:
            verdict = "finished in time without changing anything: the original is delivered (extension-unchanged)"
            citations = [.unchangedContent]
        case .expiredBestAttempt:
            verdict = "the deadline passed; its best attempt differs and is delivered (extension-expired-best-attempt)"
            citations = [.lastChance, .deadline]
        case .timeout:
            verdict = "the deadline passed without a different best attempt: the original is delivered (extension-timeout)"
            citations = [.lastChance, .deadline]
        case .failed:
            verdict = "a step failed: the original is delivered (extension-failed)"
            citations = [.stepFailed]
        case .memoryLimit:
            verdict = "its memory passed the limit: stopped at once, the original is delivered (extension-memory-limit)"
            citations = [.memoryStop, .memoryKilled, .chainMemory]
        case .alertRemoved:
            lines.append(Line(.decided, "its content has no alert text"))
            verdict = "its content has no alert text, so the original is delivered (alert-removed)"
            citations = [.keepAlertText, .alertRemoved]
        case .filtered:
            lines.append(Line(.decided, "its content has no alert text, and the app has the filtering entitlement"))
            verdict = "its content has no alert text and the app may filter: nothing is shown (discarded, extension-filtered)"
            citations = [.filtering]
        case .outputTooLarge:
            lines.append(Line(.decided, "the modified delivery record would be larger than kafka.maxMessageBytes (\(configuration.kafka.maxMessageBytes) bytes)"))
            verdict = "its delivery would not fit kafka.maxMessageBytes, so the original is delivered (output-too-large)"
            citations = [.outputTooLarge]
        }
        return ExplanationStep(
            .serviceExtension, title: "Service extension", verdict: verdict, lines: lines,
            facts: [
                "name": .string(report.name), "elapsedMs": .number(JSONNumber(Int(report.elapsedMilliseconds))),
                "expired": .bool(report.expired), "outcome": .string(report.outcome.rawValue),
                "failure": report.failure.map { .string($0) } ?? .null,
                "memory": report.memoryStop.map {
                    ["step": .string($0.step), "heldBytes": .number(JSONNumber($0.heldBytes)), "limitBytes": .number(JSONNumber($0.limitBytes))]
                } ?? .null,
                "changed": .array(changes.map { ["path": .string($0.path), "change": .string($0.kind.rawValue)] }),
                "attachments": .number(JSONNumber(delivery.disposition == .modified ? delivery.content.attachments.count : 0)),
            ],
            citations: citations)
    }

    // MARK: The app side

    /// The app-side row that matched, the callback and the launch.
    func appSide(_ delivery: Delivery) -> ExplanationStep {
        let request = delivery.request
        let rule = delivery.appSideRule ?? .otherPushType
        let delegate = configuration.apps[request.bundleID]?.appDelegate
        let payload = request.payload
        var lines = [
            Line(
                .note,
                "push type \(request.pushType.rawValue), app state \(delivery.appState.rawValue), app delegate \((delegate ?? .fetchCompletionHandler).rawValue)"
                    + (delegate == nil ? " (the default)" : "")),
            Line(
                .note,
                "the original payload: content-available \(payload.contentAvailable ? "1" : "not 1"), \(payload.hasAlertText ? "alert text" : "no alert text"), \(payload.isSilent ? "silent" : "not silent")"),
            Line(.decided, "row: \(rule.row)"),
            Line(.note, "callback: \(delivery.appCallback?.rawValue ?? "none")"),
            Line(.note, "launch: \(delivery.launch?.rawValue ?? "none")"),
        ]
        if configuration.dispatch.profile == .legacy { lines.insert(Line(.note, "legacy profile: content-available has no effect and only the deprecated callback exists"), at: 2) }
        if delivery.reason == .extensionFiltered {
            lines.append(Line(.decided, "filtered by its extension: nothing is shown, so the row's callback and launch do not happen"))
        }
        // Section 20: the row's launch by opening the notification, when the user's settings show none.
        let rowLaunchWithheld = (rule == .notRunningAlertText || rule == .forceQuitAlertText) && delivery.launch == nil
            && delivery.reason != .extensionFiltered
        if rowLaunchWithheld {
            let settings = delivery.settings ?? .defaults
            let why = settings.isUnauthorized ? "the user's authorization is \(settings.authorization.rawValue)" : "the app's alerts are off"
            lines.append(Line(.decided, "no userOpensNotification launch: \(why), so nothing is shown to open"))
        }
        var citations = [Citation.row(of: rule)]
        if delivery.reason == .extensionFiltered { citations.append(.filtering) }
        if rowLaunchWithheld { citations.append((delivery.settings ?? .defaults).isUnauthorized ? .nothingToOpen : .alertsOffShowsNothing) }
        if delivery.settings != nil, delivery.request.pushType == .alert, rule == .notRunningContentAvailable || rule == .backgroundContentAvailable {
            citations.append(.backgroundNeedsNoAuthorization)
        }
        // Apple's sentences below are about the remote-notification delegate methods: not PushKit's.
        let delegateRows = rule != .voip && rule != .otherPushType
        if delegateRows { citations.append(.appSideReadsOriginal) }
        if delivery.appCallback == .fetchCompletionHandler, delegate == .both { citations.append(.fetchCompletionHandlerWins) }
        if delivery.appCallback == .legacy { citations.append(.runningAppCallback) }
        if delivery.launch != nil, delegateRows { citations.append(.launchesApp) }
        if configuration.dispatch.profile == .legacy { citations.append(.legacyAppSide) }
        let callback = delivery.appCallback.map { "calls \($0.rawValue)" } ?? "no callback"
        let launch = delivery.launch.map { "launch \($0.rawValue)" } ?? "no launch"
        return ExplanationStep(
            .appSide, title: "App side", verdict: "\(callback); \(launch)", lines: lines,
            facts: [
                "rule": .string(rule.rawValue), "appCallback": delivery.appCallback.map { .string($0.rawValue) } ?? .null,
                "launch": delivery.launch.map { .string($0.rawValue) } ?? .null,
                "appDelegate": .string((delegate ?? .fetchCompletionHandler).rawValue),
            ],
            citations: citations)
    }

    // MARK: Badge and presentation

    /// The badge effect and the content extension presenting the delivered payload.
    func presentation(_ delivery: Delivery) -> ExplanationStep {
        let delivered = delivery.content.payload
        let profile = configuration.dispatch.profile
        let badge: String
        if let value = delivered.json["aps"]?[path: ["badge"]] {
            badge = "badge \(value.compactText): \(delivery.badgeEffect.rawValue)"
        } else {
            badge = "no badge: \(delivery.badgeEffect.rawValue)" + (profile == .legacy ? " (the legacy profile clears it)" : "")
        }
        let presented: String
        if let presentation = delivery.presentation {
            presented =
                "the content extension \(presentation.contentExtension) presents it (initialContentSizeRatio \(presentation.initialContentSizeRatio))"
        } else if delivery.request.pushType != .alert {
            presented = "no content extension: the push type is not alert"
        } else if profile == .legacy {
            presented = "no content extension: the legacy profile has none"
        } else if let category = delivered.category {
            presented = "no content extension: none of the app's claims category \(category)"
        } else {
            presented = "no content extension: the delivered payload has no aps.category"
        }
        var citations = [Citation.badgeEffect]
        if profile == .legacy, delivered.json["aps"]?[path: ["badge"]] == nil { citations.append(.badgeAbsenceClears) }
        citations.append(.presentation)
        if delivery.presentation != nil { citations.append(.contentExtensionCategories) }
        var lines = [Line(.note, badge), Line(delivery.presentation == nil ? .note : .decided, presented)]
        if let alert = delivery.userAlert {
            lines.append(Line(.decided, Self.describe(alert)))
            citations.append(.interruptionLevel)
            if alert.options != nil, delivered.hasBadge { citations.append(.foregroundBadge) }
        }
        let (settingsLines, settingsCitations) = Self.settingsEffects(delivery, profile: profile)
        lines += settingsLines
        citations += settingsCitations
        if let ledger = delivery.ledger {
            lines += Self.describe(ledger, of: delivery)
            if ledger.inserted != nil { citations.append(.badgeIncrement) }
            citations.append(.badgeLedgerChange)
        }
        if let reload = delivery.widgetReload {
            lines.append(Line(.note, "widgetReload \(reload): aps.content-changed is \(reload ? "true" : "not true") for push type \(delivery.request.pushType.rawValue)"))
            citations.append(.widgetReload)
        }
        return ExplanationStep(
            .presentation, title: "Badge and presentation",
            verdict: "badge \(delivery.badgeEffect.rawValue); " + (delivery.presentation.map { "presented by \($0.contentExtension)" } ?? "default interface"),
            lines: lines,
            facts: [
                "badgeEffect": .string(delivery.badgeEffect.rawValue),
                "contentExtension": delivery.presentation.map { .string($0.contentExtension) } ?? .null,
                "userAlert": delivery.userAlert.map(DeliveryJSON.userAlert) ?? .null,
                "widgetReload": delivery.widgetReload.map(JSONValue.bool) ?? .null,
                "badgeCount": delivery.badgeCount.map { .number(JSONNumber($0)) } ?? .null,
            ],
            citations: citations)
    }

    /// The badge ledger's part in a delivery of an app that keeps one (section 21): the count it
    /// found, the badge an increment wrote, and what it holds after.
    private static func describe(_ ledger: BadgeLedgerVerdict, of delivery: Delivery) -> [Line] {
        var lines: [Line] = []
        if let inserted = ledger.inserted, let increment = ledger.increment {
            let sign = increment > 0 ? "+" : ""
            lines.append(
                Line(
                    .decided,
                    "badge ledger: the device's count was \(ledger.before); badge-increment \(sign)\(increment) wrote aps.badge \(inserted) into the payload before gating"
                ))
        } else {
            lines.append(Line(.note, "badge ledger: the device's count was \(ledger.before)"))
        }
        if ledger.changes {
            lines.append(
                Line(
                    .decided,
                    "the badge changed (\(delivery.badgeEffect.rawValue)), so the ledger follows it: badgeCount \(ledger.after), and a badges record follows the delivery"
                ))
        } else {
            lines.append(
                Line(.note, "the badge did not change (unchanged): the ledger keeps \(ledger.before), and no badges record is written"))
        }
        return lines
    }

    /// What the user's notification settings took away from a delivery of push type `alert` in the
    /// `modern` profile (section 20), a line each, with the sentences they rest on.
    private static func settingsEffects(_ delivery: Delivery, profile: Profile) -> (lines: [Line], citations: [Citation]) {
        guard profile == .modern, delivery.request.pushType == .alert, let settings = delivery.settings, settings != .defaults else {
            return ([], [])
        }
        let delivered = delivery.content.payload
        var lines = [
            Line(
                .note,
                "the user's settings (the token's devices entry): authorization \(settings.authorization.rawValue), alerts \(settings.alerts ? "on" : "off"), sounds \(settings.sounds ? "on" : "off"), badges \(settings.badges ? "on" : "off")"
            )
        ]
        var citations: [Citation] = []
        if settings.isUnauthorized {
            lines.append(Line(.decided, "not authorized (\(settings.authorization.rawValue)): nothing is presented, no userAlert, the badge unchanged"))
            return (lines, [.unauthorizedPresentsNothing, .nothingToOpen])
        }
        if settings.authorization == .provisional {
            lines.append(Line(.decided, "provisional: delivered quietly, to the notification list only: no banner, no sound, the badge unchanged"))
            citations.append(.provisionalQuiet)
        }
        if !settings.alerts {
            lines.append(Line(.decided, "alerts off: neither banner nor list"))
            citations.append(.alertsOffShowsNothing)
        }
        if !settings.sounds, delivered.hasSound {
            lines.append(Line(.decided, "sounds off: the payload's sound does not play"))
            citations.append(.soundAndBadgeSwitches)
        }
        if !settings.badges, delivered.hasBadge {
            lines.append(Line(.decided, "badges off: the badge is unchanged"))
            if !citations.contains(.soundAndBadgeSwitches) { citations.append(.soundAndBadgeSwitches) }
        }
        return (lines, citations)
    }

    /// What the user sees (section 17), in one line.
    private static func describe(_ alert: UserAlert) -> String {
        let presents =
            alert.options.map { options in
                alert.willPresentCalled
                    ? "in the foreground willPresent passes [\(options.map(\.rawValue).joined(separator: ", "))]"
                    : "in the foreground the app does not implement willPresent: silenced"
            } ?? "not in the foreground"
        let shown = [("banner", alert.banner), ("list", alert.list), ("sound", alert.sound)].map { "\($0.0) \($0.1 ? "yes" : "no")" }
        return "what the user sees: interruption level \(alert.interruptionLevel.rawValue), Focus \(alert.focus.rawValue), \(presents); "
            + shown.joined(separator: ", ")
    }
}

