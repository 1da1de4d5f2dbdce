import Dispatcher
import JSON
import Notifications

private typealias Line = ExplanationStep.Line

/// The stages of a ``ResponseExplanation`` (SEMANTICS section 10): each reads what the dispatcher
/// recorded on the handled response (the row, the response option and its source, the callback
/// rule, the presenting content extension) and states the facts that row read.
extension ExplanationStages {
    /// The stages of a valid response, in the order the rules ran them; the content extension's
    /// only when one handled it.
    func steps(of handled: HandledResponse) -> [ExplanationStep] {
        var steps = [
            validation(ResponseCheck.self, failed: nil),
            appState(handled.appState, source: handled.appStateSource, bundleID: handled.response.bundleID),
            responseHandling(handled),
        ]
        if handled.handling.handledBy == .contentExtension { steps.append(contentExtension(handled)) }
        steps.append(appSide(of: handled))
        return steps
    }

    // MARK: Who handles it

    /// The rows of the table in order: those that did not match and why, the one that did, those
    /// not reached.
    func responseHandling(_ handled: HandledResponse) -> ExplanationStep {
        let handling = handled.handling
        let decided = handling.row
        var lines = [
            Line(.note, "the response: " + Self.describe(handled)),
            Line(.note, handled.category.map { "category \($0) (the notification's aps.category)" } ?? "no category (the notification's payload has no aps.category)"),
            Line(.note, presentation(of: handled)),
        ]
        let (rowLines, results) = Self.firstMatch(
            ResponseRow.allCases, decided: decided, verbs: ("matches", "does not match"),
            label: { "\($0.number). \($0.condition)" }, unreachedLabel: { "\($0.number). \($0.condition)" },
            fact: { fact(for: $0, handled) })
        lines += rowLines
        let rows: [JSONValue] = zip(ResponseRow.allCases, results).map { row, result in
            ["row": .number(JSONNumber(row.number)), "name": .string(row.rawValue), "result": .string(result)]
        }
        var citations = [Citation.responseRowOrder, .row(of: decided)]
        switch (decided, handled.response.action) {
        case (.dismissNotReported, _), (.app, .dismiss): citations.append(.dismissReported)
        case (.contentExtension, _): citations.append(.contentExtensionActions)
        case (.app, .defaultAction): citations.append(.defaultAction)
        case (.app, .custom) where handled.presenter != nil:
            // Presented, but its view controller does not implement didReceive: Apple's second sentence.
            citations.append(.contentExtensionActions)
        case (.mediaCommand, _), (.app, _):
            // Media commands: the content extension stage quotes Apple's media methods.
            break
        }
        return ExplanationStep(
            .responseHandling, title: "Who handles it",
            verdict: "row \(decided.number) decides: handled by \(Self.handler(of: handling)) (reason \(handling.reason.rawValue))",
            lines: lines,
            facts: [
                "row": .number(JSONNumber(decided.number)), "rowName": .string(decided.rawValue),
                "handledBy": .string(handling.handledBy.rawValue), "reason": .string(handling.reason.rawValue),
                "category": .string(orNull: handled.category), "presentedBy": .string(orNull: handled.presenter?.name),
                "rows": .array(rows),
            ],
            citations: citations)
    }

    /// Who handled it, in a few words.
    private static func handler(of handling: ResponseHandling) -> String {
        switch handling.handledBy {
        case .app: "the app"
        case .contentExtension: "the content extension \(handling.contentExtension ?? "?")"
        case .none: "nobody"
        }
    }

    /// What the user did, for a person.
    private static func describe(_ handled: HandledResponse) -> String {
        let response = handled.response
        switch response.action {
        case .defaultAction: return "the default action (\(ResponseAction.defaultIdentifier)): the user opened the notification"
        case .dismiss: return "a dismissal (\(ResponseAction.dismissIdentifier))"
        case .media(let command): return "the media command \(command.rawValue) (the content extension's media button)"
        case .custom(let id):
            let options = handled.actionOptions.isEmpty ? "no options" : "options " + handled.actionOptions.map(\.rawValue).joined(separator: ", ")
            return "the action \(id), declared with \(options)" + (response.userText == nil ? "" : ", with the text the user typed")
        }
    }

    /// Whether section 7 gave the category a content extension, and if not, why.
    private func presentation(of handled: HandledResponse) -> String {
        if let presenter = handled.presenter { return "presented by the content extension \(presenter.name) (it claims the category)" }
        if configuration.dispatch.profile == .legacy { return "not presented by a content extension: the legacy profile has none" }
        guard let category = handled.category else { return "not presented by a content extension: they claim categories, and it has none" }
        if configuration.apps[handled.response.bundleID] == nil { return "not presented by a content extension: the app is not configured under apps" }
        return "not presented by a content extension: none of the app's claims category \(category)"
    }

    /// The fact a row read, for a person.
    private func fact(for row: ResponseRow, _ handled: HandledResponse) -> String {
        let action = handled.response.action
        switch row {
        case .mediaCommand:
            if case .media(let command) = action { return "the response is the media command \(command.rawValue)" }
            return "the response is an action, not a media command"
        case .dismissNotReported:
            guard action == .dismiss else { return "the response is not a dismissal" }
            guard let category = handled.category else { return "a notification without category reports no dismissal" }
            let reports = configuration.apps[handled.response.bundleID]?.categories[category]?.reportsDismiss ?? false
            return reports
                ? "category \(category) has the customDismissAction option: the dismissal is reported"
                : "category \(category) does not have the customDismissAction option"
        case .contentExtension:
            guard case .custom = action else { return "the response is not a custom action" }
            guard let presenter = handled.presenter else { return "the category is not presented by a content extension" }
            return presenter.actionResponses == nil
                ? "\(presenter.name) has no actionResponses: its view controller does not implement didReceive(_:completionHandler:)"
                : "\(presenter.name) has actionResponses: its view controller implements didReceive(_:completionHandler:)"
        case .app:
            switch action {
            case .defaultAction: return "the default action"
            case .dismiss: return "a reported dismissal"
            case .custom: return "a custom action no content extension answers"
            case .media: return "a media command"
            }
        }
    }

    // MARK: The content extension

    /// What the content extension was asked and answered, and whether the interface closes and
    /// the action goes on to the app.
    func contentExtension(_ handled: HandledResponse) -> ExplanationStep {
        let handling = handled.handling
        let name = handling.contentExtension ?? "?"
        let callback = handling.extensionCallback?.rawValue ?? "no method"
        var lines: [Line] = []
        var citations: [Citation]
        let verdict: String
        if let option = handling.responseOption {
            lines.append(Line(.note, "\(name)'s view controller implements \(callback) (it has actionResponses)"))
            lines.append(Line(.decided, "it answers \(option.rawValue): " + Self.source(of: handling, action: handled.response.action)))
            citations = [.contentExtensionDidReceive, .actionResponses]
            verdict = "\(callback) answers \(option.rawValue)"
        } else {
            let button = handled.presenter?.mediaPlayPauseButton.rawValue ?? "?"
            lines.append(Line(.note, "\(name) has a media button (mediaPlayPauseButton \(button))"))
            lines.append(Line(.decided, "the button calls \(callback)"))
            citations = [handling.extensionCallback == .mediaPause ? .mediaPause : .mediaPlay, .mediaButton]
            verdict = "\(callback) is called"
        }
        lines.append(
            Line(
                .note,
                handling.interfaceDismissed
                    ? "the notification's interface closes (interfaceDismissed true)"
                    : "the notification's interface stays open (interfaceDismissed false)"))
        lines.append(
            Line(.note, handling.forwardedToApp ? "the action is forwarded to the app" : "the action goes no further: nothing reaches the app"))
        citations.append(.interfaceDismissed)
        return ExplanationStep(
            .contentExtension, title: "Content extension", verdict: "\(name): \(verdict)", lines: lines,
            facts: [
                "contentExtension": .string(name), "extensionCallback": .string(orNull: handling.extensionCallback?.rawValue),
                "responseOption": .string(orNull: handling.responseOption?.rawValue),
                "responseOptionFrom": .string(orNull: handling.responseOptionSource?.rawValue),
                "interfaceDismissed": .bool(handling.interfaceDismissed), "forwardedToApp": .bool(handling.forwardedToApp),
            ],
            citations: citations)
    }

    /// Which entry of `actionResponses` gave the answer, for a person.
    private static func source(of handling: ResponseHandling, action: ResponseAction) -> String {
        let id = action.identifier ?? "?"
        switch handling.responseOptionSource {
        case .action?: return "actionResponses.\(id)"
        case .fallback?: return "\(id) is not listed, so its default entry (actionResponses.default) answers"
        case .contract?, nil: return "\(id) is listed neither by itself nor under default: dismissAndForwardAction, the contract's decision"
        }
    }

    // MARK: The app side

    /// Whether the response reaches the app, which method receives it and by which rule, whether
    /// it opens the app, and the launch.
    func appSide(of handled: HandledResponse) -> ExplanationStep {
        let handling = handled.handling
        let response = handled.response
        let profile = configuration.dispatch.profile
        let settings = configuration.apps[response.bundleID]
        let app = settings ?? AppSettings()
        var facts: JSONObject = [
            "forwardedToApp": .bool(handling.forwardedToApp), "actionHandler": .string(app.actionHandler.rawValue),
            "appCallback": .string(orNull: handling.appCallback?.rawValue),
            "appCallbackRule": .string(orNull: handling.appCallbackRule?.rawValue), "opensApp": .bool(handling.opensApp),
            "launch": .string(orNull: handling.launch?.rawValue), "appState": .string(handled.appState.rawValue),
        ]
        guard handling.forwardedToApp else {
            let why =
                switch handling.row {
                case .mediaCommand: "a media command is the content extension's alone"
                case .dismissNotReported: "the dismissal is not reported"
                case .contentExtension: "\(handling.contentExtension ?? "?") answered \(handling.responseOption?.rawValue ?? "?"): only dismissAndForwardAction forwards"
                case .app: "it is not forwarded"
                }
            facts["appCallback"] = .null
            return ExplanationStep(
                .appSide, title: "App side", verdict: "nothing reaches the app: no callback, no launch",
                lines: [
                    Line(.decided, "not forwarded: \(why)"),
                    Line(.note, "no launch, whatever the app's state (\(handled.appState.rawValue))"),
                ],
                facts: facts, citations: [.responseLaunch])
        }
        var lines = [
            Line(
                .note,
                "forwarded to the app" + (handling.handledBy == .contentExtension ? " by \(handling.contentExtension ?? "?") (dismissAndForwardAction)" : "")),
            Line(
                .note,
                "action handler \(app.actionHandler.rawValue), app delegate \(app.appDelegate.rawValue)"
                    + (settings == nil ? " (the defaults: the app is not configured)" : "")),
        ]
        var citations: [Citation] = []
        let callback = handling.appCallback?.rawValue ?? "no method"
        switch handling.appCallbackRule {
        case .defaultActionAsNotification?:
            let why = profile == .legacy ? "in the legacy profile" : "with the legacy action handler \(app.actionHandler.rawValue)"
            lines.append(Line(.decided, "the default action is no action \(why): section 6's foreground row, for app delegate \(app.appDelegate.rawValue): \(callback)"))
            citations += [.legacyDefaultAction, .row(of: .foreground)]
            if handling.appCallback == .fetchCompletionHandler, app.appDelegate == .both { citations.append(.fetchCompletionHandlerWins) }
        case .actionHandler?, nil:
            lines.append(Line(.decided, "actionHandler \(app.actionHandler.rawValue): \(callback)"))
            citations.append(.actionHandlerCallbacks)
            if handling.appCallback == .handleAction { citations.append(.handleAction) }
            if handling.appCallback == .handleActionWithResponseInfo { citations.append(.handleActionWithResponseInfo) }
        }
        if handling.appCallback == nil { lines.append(Line(.note, "no method receives it: reason \(handling.reason.rawValue)")) }
        if response.userText != nil, handling.appCallback == .handleActionWithResponseInfo {
            lines.append(Line(.note, "the typed text arrives as UIUserNotificationActionResponseTypedTextKey"))
        }
        let opens: String
        switch response.action {
        case .defaultAction: opens = "opens the app: the default action does"
        case .custom where handling.opensApp: opens = "opens the app: the action has the foreground option"
        case .custom: opens = "does not open the app: the action has no foreground option"
        case .dismiss, .media: opens = "does not open the app: only the default action and foreground actions do"
        }
        lines.append(Line(.note, opens))
        citations.append(.opensApp)
        if let launch = handling.launch {
            lines.append(Line(.decided, "app state \(handled.appState.rawValue): launched, \(launch.rawValue)"))
            citations.append(.responseLaunch)
            if profile == .legacy, response.action == .defaultAction { citations.append(.showView) }
        } else {
            lines.append(Line(.note, "app state \(handled.appState.rawValue): no launch"))
        }
        let calls = handling.appCallback.map { "calls \($0.rawValue)" } ?? "no method receives it"
        return ExplanationStep(
            .appSide, title: "App side",
            verdict: "\(calls); \(handling.opensApp ? "opens the app" : "does not open the app"); \(handling.launch.map { "launch \($0.rawValue)" } ?? "no launch")",
            lines: lines, facts: facts, citations: citations)
    }
}
