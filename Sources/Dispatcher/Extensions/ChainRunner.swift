import Notifications

/// Runs a chain of service extension steps under one shared deadline (SEMANTICS section 4).
struct ChainRunner: Sendable {
    /// The time the whole chain has.
    let deadline: Duration
    /// The time the running step has to hand over a best attempt once the deadline passed.
    let expiryGrace: Duration

    /// Runs `chain` on the request's original content.
    func run(_ chain: ExtensionChain, request: NotificationRequest) async -> ChainOutcome {
        let clock = ContinuousClock()
        let start = clock.now
        let deadlineInstant = start + deadline
        let original = ValidatedContent(payload: request.payload)
        var current = original
        for step in chain.steps {
            let instance = step.make()
            let stepRequest = ServiceExtensionRequest(
                notification: request, content: current.content, category: request.payload.category,
                stepName: step.name, deadline: deadlineInstant)
            let result = await DeadlineWait.value(until: deadlineInstant) {
                do {
                    return Result<NotificationContent, any Error>.success(try await instance.didReceive(stepRequest))
                } catch {
                    return .failure(error)
                }
            }
            switch result {
            case .some(.success(let output)):
                guard let validated = ValidatedContent(output) else {
                    let detail = Self.invalidDetail(output)
                    return ChainOutcome(
                        ending: .failed(step: step.name, detail: detail, kind: Self.invalidOutputKind), elapsed: clock.now - start)
                }
                current = validated
            case .some(.failure(let error)) where clock.now < deadlineInstant:
                return ChainOutcome(
                    ending: .failed(step: step.name, detail: String(describing: error), kind: ExtensionFailureLog.kind(of: error)),
                    elapsed: clock.now - start)
            case .none, .some(.failure):
                // The deadline passed, or the step failed just as it passed (its own deadline
                // check, or cancellation surfacing as an error won the race with the timer): time
                // ran out either way, so the step gets its last chance rather than a failure.
                let handedOver = await DeadlineWait.value(until: clock.now + expiryGrace) {
                    await instance.serviceExtensionTimeWillExpire()
                }
                // An invalid best attempt counts as none: the chain's best is then its last finished step.
                let best = handedOver.flatMap { $0 }.flatMap(ValidatedContent.init) ?? current
                let differs = best.payload != original.payload || !best.attachments.isEmpty
                return ChainOutcome(ending: .expired(differs ? best : nil), elapsed: clock.now - start)
            }
        }
        return ChainOutcome(ending: .finished(current), elapsed: clock.now - start)
    }

    /// The failure kind of a step whose output breaks the type rules.
    static let invalidOutputKind = "invalid-output"

    /// Why `content` fails the type rules, for the report.
    private static func invalidDetail(_ content: NotificationContent) -> String {
        do {
            _ = try Payload(validating: .object(content.payload))
            return "the step returned invalid content"
        } catch {
            return "the step returned an invalid payload: \(error)"
        }
    }
}
