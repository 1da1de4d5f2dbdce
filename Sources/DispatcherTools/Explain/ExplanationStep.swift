import Dispatcher
package import JSON
import Notifications

/// One stage of the path a request or a response took through the rules: what was decided, the facts it was
/// decided on, and the sentences it rests on.
package struct ExplanationStep: Sendable, Hashable {
    /// Which stage of the rules.
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Validation (SEMANTICS sections 1 and 2; section 10 for a response).
        case validation
        /// The push type, priority and payload size (section 1).
        case pushType = "push-type"
        /// The app's state (section 6).
        case appState = "app-state"
        /// Expiry and force-quit (sections 5 and 6).
        case discard
        /// Gating (section 3).
        case gating
        /// Routing (section 4).
        case routing
        /// The service extension's run and the post-check (section 4).
        case serviceExtension = "service-extension"
        /// Who handles a response: the row of section 10's table that matched.
        case responseHandling = "response-handling"
        /// The content extension that handled a response: its method and answer (section 10).
        case contentExtension = "content-extension"
        /// Callback and launch (section 6; section 10 for a response).
        case appSide = "app-side"
        /// Badge and presentation (sections 6 and 7).
        case presentation
        /// Writing the outputs (section 5; the output limit).
        case outputs
        /// What a Live Activity push did to its activity (section 14).
        case liveActivity = "live-activity"
        /// A broadcast's fan-out to the activities subscribed to its channel (section 15).
        case broadcast
        /// Store and forward for an offline device (section 16).
        case storeAndForward = "store-and-forward"
    }

    /// One line under a step.
    package struct Line: Sendable, Hashable {
        /// What the line says about its subject.
        package enum Mark: String, Sendable, Hashable {
            /// A check that passed, or a rule that did not apply.
            case passed
            /// The check that failed, or the rule that applied.
            case decided
            /// Not evaluated: an earlier check or rule decided.
            case notReached = "not-reached"
            /// A fact.
            case note
        }

        /// What the line says about its subject.
        package let mark: Mark
        /// The line, for a person.
        package let text: String

        /// Creates a line.
        package init(_ mark: Mark, _ text: String) {
            self.mark = mark
            self.text = text
        }
    }

    /// Which stage.
    package let kind: Kind
    /// The stage's name, for a person (`Gating`).
    package let title: String
    /// What was decided, in one line.
    package let verdict: String
    /// The facts and sub-decisions, in order.
    package let lines: [Line]
    /// The decision's facts as data (for `--json`).
    package let facts: JSONObject
    /// The sentences the decision rests on.
    package let citations: [Citation]

    /// Creates a step.
    package init(_ kind: Kind, title: String, verdict: String, lines: [Line] = [], facts: JSONObject = [:], citations: [Citation] = []) {
        self.kind = kind
        self.title = title
        self.verdict = verdict
        self.lines = lines
        self.facts = facts
        self.citations = citations
    }
}
