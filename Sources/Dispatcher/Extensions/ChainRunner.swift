import Dispatch
import JSON
import Notifications
import Synchronization

/// Runs a chain of service extension steps under one shared deadline (SEMANTICS section 4).
struct ChainRunner: Sendable {
    /// The time the whole chain has.
    let deadline: Duration
    /// The time the running step has to hand over a best attempt once the deadline passed.
    let expiryGrace: Duration

    /// Starts `chain` on the request's original content and calls `completion` once, with how the
    /// run ended: when the last step finished, a step failed, or the deadline passed and the
    /// running step's last chance ended.
    ///
    /// The steps run one after another in one task of their own; the deadline is a timer, not a
    /// task waiting on each step. A service extension is user code: one that ignores cancellation
    /// cannot hold the record past its deadline, because the timer completes the run without it
    /// (and cancels the steps' task, which is then left to finish on its own). And while a record
    /// waits on its webhook, that one task is all it holds: no caller waits for it, frames and all
    /// (with 10,000 calls in flight that is the worker's memory: docs/performance.md).
    func start(_ chain: ExtensionChain, request: NotificationRequest, completion: @escaping @Sendable (ChainOutcome) -> Void) {
        ChainRun(request: request, expiryGrace: expiryGrace, completion: completion).begin(chain, within: deadline)
    }

    /// Runs `chain` and waits for its outcome. Cancelling the caller counts as the deadline
    /// passing: the running step gets its last chance.
    func run(_ chain: ExtensionChain, request: NotificationRequest) async -> ChainOutcome {
        let handle = Mutex<ChainRun?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let run = ChainRun(request: request, expiryGrace: expiryGrace) { continuation.resume(returning: $0) }
                handle.withLock { $0 = run }
                run.begin(chain, within: deadline)
            }
        } onCancel: {
            handle.withLock { $0 }?.expire()
        }
    }

    /// The failure kind of a step whose output breaks the type rules.
    static let invalidOutputKind = "invalid-output"
}

/// One run of a chain: the steps' progress, shared by the steps' task and the deadline's timer,
/// and the one completion, called by whichever ends the run first.
private final class ChainRun: Sendable {
    /// Where the run is.
    private enum Phase {
        /// Steps run; `step` is the running one (nil between steps), `current` the content after
        /// the last finished step.
        case running(step: (any ServiceExtension)?, current: ValidatedContent)
        /// The deadline passed: the last chance runs, or the run ended.
        case ended
    }

    private struct State {
        var phase: Phase
        /// The steps' task, cancelled when the deadline passes first.
        var steps: Task<Void, Never>?
        /// The deadline, cancelled when the steps end first.
        var timer: OneShotTimer?
    }

    let request: NotificationRequest
    let original: ValidatedContent
    let expiryGrace: Duration
    let start: ContinuousClock.Instant
    private let completion: @Sendable (ChainOutcome) -> Void
    private let state: Mutex<State>

    init(request: NotificationRequest, expiryGrace: Duration, completion: @escaping @Sendable (ChainOutcome) -> Void) {
        self.request = request
        self.original = ValidatedContent(payload: request.payload)
        self.expiryGrace = expiryGrace
        self.completion = completion
        self.start = .now
        self.state = Mutex(State(phase: .running(step: nil, current: original)))
    }

    /// Starts the steps' task and arms the deadline, `deadline` from the run's start; should the
    /// run have ended already (the caller was cancelled at once), cancels both.
    func begin(_ chain: ExtensionChain, within deadline: Duration) {
        let deadlineInstant = start + deadline
        let steps = Task { await runSteps(chain, deadline: deadlineInstant) }
        // The timer holds the run weakly: a run that ended is freed at once.
        let timer = OneShotTimer(at: deadlineInstant) { [weak self] in
            // The expiry is a job on the concurrency pool, queued behind the steps' own jobs: a
            // step that finished in time but whose last job still waits for a thread of a busy
            // pool is not counted as late.
            guard let self else { return }
            Task { self.expire() }
        }
        let ended = state.withLock { state -> Bool in
            guard case .running = state.phase else { return true }
            state.steps = steps
            state.timer = timer
            return false
        }
        if ended {
            timer.cancel()
            steps.cancel()
        }
    }

    /// Runs the steps one after another, in the steps' task.
    private func runSteps(_ chain: ExtensionChain, deadline: ContinuousClock.Instant) async {
        for step in chain.steps {
            let instance = step.make()
            guard let current = stepStarting(instance) else { return }
            let stepRequest = ServiceExtensionRequest(
                notification: request, content: current.content, category: request.payload.category,
                stepName: step.name, deadline: deadline)
            do {
                let output = try await instance.didReceive(stepRequest)
                guard let validated = ValidatedContent(output) else {
                    let detail = Self.invalidDetail(output)
                    return end { _ in .failed(step: step.name, detail: detail, kind: ChainRunner.invalidOutputKind) }
                }
                guard finished(with: validated) else { return }
            } catch where ContinuousClock.now < deadline {
                let failure = ChainOutcome.Ending.failed(
                    step: step.name, detail: String(describing: error), kind: ExtensionFailureLog.kind(of: error))
                return end { _ in failure }
            } catch {
                // The step failed just as the deadline passed (its own deadline check, or
                // cancellation surfacing as an error won the race with the timer): time ran out
                // either way, so the step gets its last chance rather than a failure.
                return expire()
            }
        }
        end { current in .finished(current) }
    }

    /// The deadline passed (or the caller gave up): unless the run ended, the running step gets
    /// its last chance, within the grace period, and the run ends with the best attempt.
    func expire() {
        let taken = state.withLock { state -> (step: (any ServiceExtension)?, current: ValidatedContent, steps: Task<Void, Never>?)? in
            guard case .running(let step, let current) = state.phase else { return nil }
            state.phase = .ended
            return (step, current, state.steps)
        }
        guard let taken else { return }
        taken.steps?.cancel()
        // Rare (only a run that ran out of time), so it may take a task and a wait of its own.
        Task {
            var handedOver: NotificationContent?
            if let step = taken.step {
                handedOver = await DeadlineWait.value(until: .now + expiryGrace) { await step.serviceExtensionTimeWillExpire() } ?? nil
            }
            // An invalid best attempt counts as none: the chain's best is then its last finished step.
            let best = handedOver.flatMap(ValidatedContent.init) ?? taken.current
            let differs = best.payload != original.payload || !best.attachments.isEmpty
            completion(ChainOutcome(ending: .expired(differs ? best : nil), elapsed: .now - start))
        }
    }

    /// A step starts: the content it works on, nil when the run ended meanwhile.
    private func stepStarting(_ step: any ServiceExtension) -> ValidatedContent? {
        state.withLock { state in
            guard case .running(_, let current) = state.phase else { return nil }
            state.phase = .running(step: step, current: current)
            return current
        }
    }

    /// A step finished with valid content. - Returns: whether the run goes on.
    private func finished(with content: ValidatedContent) -> Bool {
        state.withLock { state in
            guard case .running = state.phase else { return false }
            state.phase = .running(step: nil, current: content)
            return true
        }
    }

    /// Ends the run, unless the deadline ended it first, with what `ending` makes of the content
    /// after the last finished step.
    private func end(_ ending: (ValidatedContent) -> ChainOutcome.Ending) {
        let ended = state.withLock { state -> (current: ValidatedContent, timer: OneShotTimer?)? in
            guard case .running(_, let current) = state.phase else { return nil }
            state.phase = .ended
            return (current, state.timer)
        }
        guard let ended else { return }
        ended.timer?.cancel()
        completion(ChainOutcome(ending: ending(ended.current), elapsed: .now - start))
    }

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

/// A Dispatch timer that fires once, unless cancelled first.
///
/// A timer source rather than `asyncAfter` or a sleeping task: cancelling a source takes it off
/// Dispatch's timer list and frees its handler at once. A cancelled `asyncAfter` work item, or a
/// cancelled `Task.sleep`'s wake-up job, stays queued until its deadline: at 4,000 records a
/// second with a 30 s deadline, 120,000 of them for records long done.
///
/// `@unchecked Sendable`: a Dispatch source may be cancelled from any thread (Dispatch's own
/// guarantee, which the Swift overlay does not declare); the type offers nothing else.
final class OneShotTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer

    /// Arms the timer for `deadline` (at once, when it passed).
    init(at deadline: ContinuousClock.Instant, _ handler: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: .global())
        let nanoseconds = max(0, ContinuousClock.now.duration(to: deadline).wholeNanoseconds)
        source.schedule(deadline: .now() + .nanoseconds(Int(nanoseconds)))
        source.setEventHandler(handler: handler)
        source.activate()
    }

    /// Stops the timer; its handler has run or never will.
    func cancel() {
        source.cancel()
    }
}
