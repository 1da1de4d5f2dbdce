package import Foundation
import JSON
import Notifications

extension Dispatcher {
    /// The longest a Live Activity stays on the Lock Screen after it ends: four hours (section 14.4).
    package static let longestDismissal: Int64 = 14_400

    /// Executes every command of `work` in order, then adds its trailing outputs: what offline
    /// `dispatch` (and the worker, for commands whose activity it owns) does with a
    /// ``DispatchStep/activity(_:)``.
    /// - Returns: the one command's result when there is one and nothing trails it, else
    ///   ``DispatchResult/Decision/several(_:)`` of the results, outputs in order.
    package func execute(_ work: ActivityWork, tables: StateTables, now: Date) -> DispatchResult {
        let results = work.commands.map { execute($0, tables: tables, now: now) }
        if results.count == 1, work.trailing.isEmpty { return results[0] }
        return DispatchResult(.several(results), outputs: results.flatMap(\.outputs) + work.trailing)
    }

    /// Executes one command against the activity of its token (section 14.3, rows 1 to 9 for a
    /// device's push, rows 1 and 4 to 9 for a broadcast's subscribed activity): changes the
    /// activities table and the budgets, and returns the delivery followed, when the activity
    /// changed, by its activities record (section 14.6). A start that would exceed
    /// `dispatch.stateLimits.activities` with no dismissed activity to drop is a
    /// `ServiceUnavailable` dead letter of the request.
    /// - Parameter now: the time of execution: the delivery's `deliveredAt`, staleness, budgets
    ///   and dismissal.
    package func execute(_ command: ActivityCommand, tables: StateTables, now: Date) -> DispatchResult {
        let request = command.request
        let app = apps[request.bundleID]
        var delivery = Delivery(
            request: request, disposition: .discarded, reason: .expired, content: ValidatedContent(payload: request.payload),
            extensionReport: nil, presentation: nil, badgeEffect: .unchanged, appState: command.appState,
            appStateSource: command.appStateSource, appCallback: nil, launch: nil, deliveredAt: now)
        delivery.channelID = command.channelID
        if command.isExpired {
            return fitted(DispatchResult(.delivered(delivery), topics: configuration.topics), record: command.requestRecord)
        }
        let outcome = applyActivity(command, app: app?.settings, tables: tables, now: now)
        guard case .applied(let report, let change) = outcome else {
            return deadLettered(
                command.requestRecord,
                Rejection(
                    .serviceUnavailable,
                    "The activities table is full: \(tables.activities?.limit ?? 0) activities, none of them dismissed (dispatch.stateLimits.activities); the Live Activity cannot be started."),
                at: now, addedMessageID: command.kind == .broadcast ? command.apnsID.description : nil)
        }
        let side = AppSideDecision.decide(
            pushType: .liveactivity, profile: configuration.dispatch.profile, state: command.appState,
            delegate: app?.settings.appDelegate ?? .fetchCompletionHandler, traits: request.payload.traits,
            hidesViewButton: request.payload.hidesViewButton)
        delivery.appSideRule = side.rule
        let modification = Modification(
            disposition: .original, reason: .pushTypeNotModifiable, content: delivery.content, report: nil)
        let decided = decide(delivery, modification, Context(side: side, app: app, device: nil))
        guard var finished = decided.delivery else { return decided }
        finished.liveActivity = report
        finished.activityChange = change
        return fitted(DispatchResult(.delivered(finished), topics: configuration.topics, limit: outputLimit), record: command.requestRecord)
    }

    /// What applying a command to its activity came to.
    private enum ActivityOutcome {
        /// The row of section 14.3 that matched, and the activity's change when it changed.
        case applied(LiveActivityReport, ActivityChange?)
        /// A start that the full activities table cannot take.
        case tableFull
    }

    /// The rows of section 14.3, the first that matches deciding, with the table's change.
    private func applyActivity(_ command: ActivityCommand, app: AppSettings?, tables: StateTables, now: Date) -> ActivityOutcome {
        let aps = command.payload.json["aps"]?.objectValue ?? JSONObject()
        let event = command.event
        let timestamp = aps["timestamp"].flatMap(ActivityEntry.integer)
        let hasAlertText = command.payload.hasAlertText
        let seconds = Timestamp.seconds(now)
        let token = command.activityToken
        // Section 14.2: a start creates its activity; an update or end addresses the app's entry.
        let existing = event == .start ? nil : tables.activities?.entry(forActivityToken: token).flatMap { $0.bundleID == command.bundleID ? $0 : nil }
        func report(_ result: LiveActivityResult, _ entry: ActivityEntry?) -> LiveActivityReport {
            LiveActivityReport(
                activityToken: token, event: event, result: result, state: entry?.state(at: seconds),
                alerted: result.changesActivity && hasAlertText)
        }
        // Row 1.
        let isMalformed =
            event == nil || timestamp == nil
            || (event == .start
                && (aps["attributes-type"] == nil || aps["attributes"] == nil || aps["content-state"] == nil || !hasAlertText))
            || (event == .update && aps["content-state"] == nil)
            || (aps["input-push-token"] != nil && aps["input-push-channel"] != nil)
        guard !isMalformed, let event, let timestamp else { return .applied(report(.malformed, existing), nil) }
        let budgets = tables.liveActivityBudgets
        let milliseconds = Timestamp.milliseconds(now)
        switch event {
        case .start:
            let channel = aps["input-push-channel"]?.stringValue
            // Row 2.
            if let channel, tables.channels?.hasChannel(channel, bundleID: command.bundleID) != true {
                return .applied(report(.channelUnknown, nil), nil)
            }
            // Row 3, within dispatch.stateLimits.activities (docs/rules.md, "Memory bound").
            var evicted: String?
            if let activities = tables.activities, activities.entry(forActivityToken: token) == nil {
                switch activities.makeRoom(now: seconds) {
                case .free: break
                case .evicted(let dropped): evicted = dropped
                case .full: return .tableFull
                }
            }
            var entry = ActivityEntry(bundleID: command.bundleID, status: .active, timestamp: timestamp)
            entry.attributesType = aps["attributes-type"]?.stringValue
            entry.attributes = aps["attributes"]?.objectValue
            entry.contentState = aps["content-state"]?.objectValue
            entry.staleDate = aps["stale-date"].flatMap(ActivityEntry.integer)
            entry.relevanceScore = aps["relevance-score"]?.numberValue
            entry.channelID = channel
            tables.activities?.set(token, entry)
            return .applied(report(.started, entry), ActivityChange(activityToken: token, entry: entry, evicted: evicted))
        case .update, .end:
            // Rows 4 to 7.
            guard var entry = existing else { return .applied(report(.noActivity, nil), nil) }
            if entry.status == .ended { return .applied(report(.endedIgnored, entry), nil) }
            if timestamp <= entry.timestamp { return .applied(report(.staleIgnored, entry), nil) }
            let budget = app?.liveActivityBudget ?? AppSettings().liveActivityBudget
            if command.priority == .immediate, let budgets, budgets.count(token, now: milliseconds) >= budget {
                return .applied(report(.throttled, entry), nil)
            }
            entry.timestamp = timestamp
            let result: LiveActivityResult
            if event == .update {
                // Row 8.
                entry.contentState = aps["content-state"]?.objectValue
                entry.staleDate = aps["stale-date"].flatMap(ActivityEntry.integer)
                entry.relevanceScore = aps["relevance-score"]?.numberValue
                result = .updated
            } else {
                // Row 9, and the dismissal date of section 14.4.
                entry.status = .ended
                if let state = aps["content-state"]?.objectValue { entry.contentState = state }
                let latest = seconds + Self.longestDismissal
                entry.dismissalDate = aps["dismissal-date"].flatMap(ActivityEntry.integer).map { min($0, latest) } ?? latest
                result = .ended
            }
            if command.priority == .immediate { budgets?.record(token, now: milliseconds) }
            tables.activities?.set(token, entry)
            return .applied(report(result, entry), ActivityChange(activityToken: token, entry: entry))
        }
    }
}
