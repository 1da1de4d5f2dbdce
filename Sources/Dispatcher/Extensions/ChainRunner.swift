import Dispatch
import JSON
import Notifications
import Synchronization

/// Runs a chain of service extension steps under one shared deadline (SEMANTICS section 4) and
/// one memory limit (section 22).
struct ChainRunner: Sendable {
    /// The time the whole chain has.
    let deadline: Duration
    /// The time the running step has to hand over a best attempt once the deadline passed.
    let expiryGrace: Duration
    /// The bytes the chain may hold at once (`extensionMemoryLimit`).
    let memoryLimit: Int

    /// A runner with `deadline`, `expiryGrace` and `memoryLimit` (by default `dispatch.extensionMemoryLimit`'s default).
    init(deadline: Duration, expiryGrace: Duration, memoryLimit: Int = DispatchSettings.defaultExtensionMemoryLimit) {
        self.deadline = deadline
        self.expiryGrace = expiryGrace
        self.memoryLimit = memoryLimit
    }

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
        ChainRun(request: request, expiryGrace: expiryGrace, memoryLimit: memoryLimit, completion: completion)
            .begin(chain, within: deadline)
    }

    /// Runs `chain` and waits for its outcome. Cancelling the caller counts as the deadline
    /// passing: the running step gets its last chance.
    func run(_ chain: ExtensionChain, request: NotificationRequest) async -> ChainOutcome {
        let handle = Mutex<ChainRun?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let run = ChainRun(request: request, expiryGrace: expiryGrace, memoryLimit: memoryLimit) {
                    continuation.resume(returning: $0)
                }
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
/// and the one completion, called by whichever ends the run first: the last step, a failure, the
/// deadline, or the memory passing its limit (section 22), which the running step's declarations
/// (``ExtensionMemory``) are counted against here.
private final class ChainRun: ExtensionMemoryAccount {
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
        /// What the chain holds: the content's bytes and the running step's declarations.
        var memory: ChainMemoryState
        /// The running step's name, for a stop while it runs.
        var stepName = ""
    }

    let request: NotificationRequest
    let original: ValidatedContent
    let expiryGrace: Duration
    let limit: Int
    let start: ContinuousClock.Instant
    private let completion: @Sendable (ChainOutcome) -> Void
    private let state: Mutex<State>

    init(
        request: NotificationRequest, expiryGrace: Duration, memoryLimit: Int, completion: @escaping @Sendable (ChainOutcome) -> Void
    ) {
        self.request = request
        self.original = ValidatedContent(payload: request.payload)
        self.expiryGrace = expiryGrace
        self.limit = memoryLimit
        self.completion = completion
        self.start = .now
        // The request's payload keeps its bytes: its size costs no serialisation.
        self.state = Mutex(
            State(phase: .running(step: nil, current: original), memory: ChainMemoryState(content: ExtensionMemory.bytes(of: original))))
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
        for (index, step) in chain.steps.enumerated() {
            let instance = step.make()
            guard let (current, contentBytes) = stepStarting(instance, index: index, name: step.name) else { return }
            // Only the original can be over the limit here: every later content was measured when handed on.
            guard contentBytes <= limit else { return stopForMemory(step: step.name, held: contentBytes) }
            let stepRequest = ServiceExtensionRequest(
                notification: request, content: current.content, category: request.payload.category,
                stepName: step.name, deadline: deadline, memory: ExtensionMemory(account: self, step: index))
            do {
                let output = try await instance.didReceive(stepRequest)
                guard let validated = ValidatedContent(output) else {
                    let detail = Self.invalidDetail(output)
                    return end { _ in .failed(step: step.name, detail: detail, kind: ChainRunner.invalidOutputKind) }
                }
                // The content it hands on is what the chain holds next; what it declared is released.
                let bytes = ExtensionMemory.bytes(of: validated)
                guard bytes <= limit else { return stopForMemory(step: step.name, held: bytes) }
                guard finished(with: validated, bytes: bytes) else { return }
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

    /// A step starts: the content it works on and its bytes, nil when the run ended meanwhile.
    private func stepStarting(_ step: any ServiceExtension, index: Int, name: String) -> (ValidatedContent, Int)? {
        state.withLock { state in
            guard case .running(_, let current) = state.phase else { return nil }
            state.phase = .running(step: step, current: current)
            state.memory.step = index
            state.memory.held = 0
            state.stepName = name
            return (current, state.memory.content)
        }
    }

    /// A step finished with valid content of `bytes`. - Returns: whether the run goes on.
    private func finished(with content: ValidatedContent, bytes: Int) -> Bool {
        state.withLock { state in
            guard case .running = state.phase else { return false }
            state.phase = .running(step: nil, current: content)
            state.memory.content = bytes
            // The finished step's declarations are released, and any it makes later (from work it
            // left running) no longer count: only the running step's do.
            state.memory.held = 0
            state.memory.step = -1
            return true
        }
    }

    // MARK: Memory (section 22)

    var held: Int { state.withLock { $0.memory.total } }

    /// Counts `bytes` declared by step `step`; when they take the chain past its limit, stops it at
    /// once, as the system kills an extension: no last chance, no best attempt.
    func hold(_ bytes: Int, step: Int) -> MemoryHold {
        /// What the lock decided: counted, ignored, or the run stopped (and what to stop outside the lock).
        enum Counted {
            case held, ignored
            case passed(total: Int, step: String, steps: Task<Void, Never>?, timer: OneShotTimer?)
        }
        let counted = state.withLock { state -> Counted in
            guard case .running = state.phase, state.memory.step == step else { return .ignored }
            state.memory.add(bytes)
            guard state.memory.total > limit else { return .held }
            state.phase = .ended
            return .passed(total: state.memory.total, step: state.stepName, steps: state.steps, timer: state.timer)
        }
        switch counted {
        case .held: return .held
        case .ignored: return .ignored
        case .passed(let total, let name, let steps, let timer):
            timer?.cancel()
            steps?.cancel()
            completion(memoryOutcome(step: name, held: total))
            return .passed(total: total)
        }
    }

    func release(_ bytes: Int, step: Int) {
        state.withLock { state in
            guard state.memory.step == step else { return }
            state.memory.held = max(0, state.memory.held - bytes)
        }
    }

    /// Ends the run because the content `step` works on, or hands on, takes `held` bytes, past the limit.
    private func stopForMemory(step: String, held: Int) {
        end { _ in .memoryLimit(ExtensionReport.MemoryStop(step: step, heldBytes: held, limitBytes: self.limit)) }
    }

    /// The outcome of a stop for memory in `step` at `held` bytes.
    private func memoryOutcome(step: String, held: Int) -> ChainOutcome {
        ChainOutcome(ending: .memoryLimit(ExtensionReport.MemoryStop(step: step, heldBytes: held, limitBytes: limit)), elapsed: .now - start)
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
