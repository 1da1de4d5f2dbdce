package import Notifications

extension DispatchResult {
    /// What a result is counted by (a delivery's disposition and reason, a dead letter's reason, a
    /// response's handler and reason, a launch's trigger), read once when the result is made.
    ///
    /// Counting reads these instead of the decision: reading a decision out of its result copies
    /// it, and a delivery's copy retains each of its references (its request's strings, headers,
    /// payload) and releases them again, four times per record before these labels existed.
    package struct Labels: Sendable, Equatable {
        /// What the result is, for the counters.
        package enum Outcome: Sendable, Equatable {
            /// A delivery record (for a stored request: the one it replaced).
            case delivery(Disposition, DeliveryReason)
            /// A dead letter, with whether a token feedback record goes with it (section 12.2).
            case deadLetter(RejectionReason, withFeedback: Bool)
            /// An action record (section 10).
            case action(HandledBy, ActionReason)
            /// Several results, counted one by one (``DispatchResult/parts``).
            case several
            /// Nothing counted now: a request stored without replacing another (section 16.1).
            case none
        }

        /// What the result is.
        package var outcome: Outcome
        /// The launch it triggers, if any.
        package var launch: LaunchTrigger?
        /// Whether a service extension ran (its report is then read from the delivery).
        package var hasExtensionReport: Bool

        /// The labels of `decision`, whose outputs are `outputs`.
        /// Labels given as they are (a record decided in place has no result to read them from).
        package init(outcome: Outcome, launch: LaunchTrigger?, hasExtensionReport: Bool) {
            self.outcome = outcome
            self.launch = launch
            self.hasExtensionReport = hasExtensionReport
        }

        init(_ decision: Decision, outputs: [OutputRecord]) {
            launch = nil
            hasExtensionReport = false
            switch decision {
            case .delivered(let delivery):
                outcome = .delivery(delivery.disposition, delivery.reason)
                launch = delivery.launch
                hasExtensionReport = delivery.extensionReport != nil
            case .handled(let handled):
                outcome = .action(handled.handling.handledBy, handled.handling.reason)
                launch = handled.handling.launch
            case .deadLettered(let deadLetter):
                outcome = .deadLetter(deadLetter.rejection.reason, withFeedback: outputs.last?.kind == .feedback)
            case .stored(_, let replaced?):
                outcome = .delivery(replaced.disposition, replaced.reason)
            case .stored:
                outcome = .none
            case .several:
                outcome = .several
            }
        }
    }
}
