import Dispatcher
import Kafka
import Testing

@testable import DispatcherService
import Records

@Suite("Per-key scheduling and flow control")
struct SchedulingTests {
    @Test("items of one key run one after another in arrival order; other keys run at once")
    func serialPerKey() {
        var queues = SerialQueues<String, Int>()
        do { let result = queues.enqueue(1, key: "a"); #expect(result == 1) }
        do { let result = queues.enqueue(2, key: "a"); #expect(result == nil) }
        do { let result = queues.enqueue(3, key: "b"); #expect(result == 3) }
        do { let result = queues.enqueue(4, key: "a"); #expect(result == nil) }
        #expect(queues.activeKeys == 2)
        do { let result = queues.next(after: "a"); #expect(result == 2) }
        do { let result = queues.next(after: "b"); #expect(result == nil) }
        do { let result = queues.next(after: "a"); #expect(result == 4) }
        do { let result = queues.next(after: "a"); #expect(result == nil) }
        #expect(queues.activeKeys == 0)
        // The key is idle again: the next item starts at once.
        do { let result = queues.enqueue(5, key: "a"); #expect(result == 5) }
    }

    @Test("an open key starts items that pipeline behind its running ones; a closed key, or one with items waiting, queues them")
    func pipelining() {
        var queues = SerialQueues<String, Int>()
        #expect(queues.activateOrWait("a", pipelines: true) { 1 } == .started)
        #expect(queues.activateOrWait("a", pipelines: true) { 2 } == .pipelined)
        // An item that does not pipeline (a record of another topic) waits even behind an open key.
        #expect(queues.activateOrWait("a") { 3 } == .queued)
        // Something waits: a pipelining item may not pass it.
        #expect(queues.activateOrWait("a", pipelines: true) { 4 } == .queued)
        // The first running item finished: one still runs, so nothing starts yet.
        #expect(queues.next(after: "a") == nil)
        // The last one finished: the waiting ones start one at a time, and the key is closed
        // behind them, so a pipelining item queues.
        #expect(queues.next(after: "a") == 3)
        #expect(queues.activateOrWait("a", pipelines: true) { 5 } == .queued)
        #expect(queues.next(after: "a") == 4)
        #expect(queues.next(after: "a") == 5)
        #expect(queues.next(after: "a") == nil)
        #expect(queues.activeKeys == 0)

        // Closed while open: what comes next waits for every running item.
        #expect(queues.activateOrWait("b", pipelines: true) { 6 } == .started)
        #expect(queues.activateOrWait("b", pipelines: true) { 7 } == .pipelined)
        queues.close("b")
        #expect(queues.activateOrWait("b", pipelines: true) { 8 } == .queued)
        #expect(queues.next(after: "b") == nil)
        #expect(queues.next(after: "b") == 8)
        #expect(queues.next(after: "b") == nil)
        #expect(queues.activeKeys == 0)
    }

    @Test("an item requeued waits behind the running ones and after those waiting; alone, it starts again at once")
    func requeue() {
        var queues = SerialQueues<String, Int>()
        #expect(queues.activateOrWait("a", pipelines: true) { 1 } == .started)
        #expect(queues.activateOrWait("a", pipelines: true) { 2 } == .pipelined)
        #expect(queues.activateOrWait("a", pipelines: true) { 3 } == .pipelined)
        // Item 1 closed the key: 2 and 3 wait after all, in order, behind it.
        #expect(queues.requeue(2, key: "a") == nil)
        #expect(queues.requeue(3, key: "a") == nil)
        #expect(queues.next(after: "a") == 2)
        #expect(queues.next(after: "a") == 3)
        #expect(queues.next(after: "a") == nil)
        // Nothing else runs: the requeued item starts again at once.
        #expect(queues.activateOrWait("b", pipelines: true) { 4 } == .started)
        #expect(queues.requeue(4, key: "b") == 4)
        #expect(queues.next(after: "b") == nil)
        #expect(queues.activeKeys == 0)
    }

    @Test("a key forgotten (its running items given up) drops its waiting items and is idle again")
    func forget() {
        var queues = SerialQueues<String, Int>()
        #expect(queues.activateOrWait("a", pipelines: true) { 1 } == .started)
        #expect(queues.activateOrWait("a", pipelines: true) { 2 } == .pipelined)
        #expect(queues.activateOrWait("a") { 3 } == .queued)
        queues.forget("a")
        #expect(queues.activeKeys == 0)
        // The waiting 3 went with it: nothing of the key is handed out any more.
        #expect(queues.next(after: "a") == nil)
        #expect(queues.activateOrWait("a", pipelines: true) { 4 } == .started)
    }

    @Test("revocation removes the matching waiting items only, the others keep their order")
    func removeWaiting() {
        var queues = SerialQueues<Int, String>()
        _ = queues.enqueue("p1-first", key: 1)
        _ = queues.enqueue("p1-second", key: 1)
        _ = queues.enqueue("p2-first", key: 2)
        _ = queues.enqueue("p2-second", key: 2)
        _ = queues.enqueue("p1-third", key: 1)
        _ = queues.enqueue("p2-third", key: 2)
        let removed = queues.removeWaiting { $0.hasPrefix("p1") || $0 == "p2-second" }
        #expect(removed.sorted() == ["p1-second", "p1-third", "p2-second"])
        do { let result = queues.next(after: 1); #expect(result == nil) }
        do { let result = queues.next(after: 2); #expect(result == "p2-third") }
    }

    @Test("a FIFO keeps order across many pushes and pops")
    func fifoOrder() {
        var fifo = FIFO<Int>()
        var expected = 0
        for value in 0..<5_000 {
            fifo.push(value)
            if value % 3 == 0, let popped = fifo.pop() {
                #expect(popped == expected)
                expected += 1
            }
        }
        while let popped = fifo.pop() {
            #expect(popped == expected)
            expected += 1
        }
        #expect(expected == 5_000)
        #expect(fifo.isEmpty)
    }

    @Test("pauses at either limit and resumes only below both low-water marks")
    func flowControl() {
        var flow = FlowControl(maxRecords: 10, maxBytes: 1_000, resumeRatio: 0.5)
        for _ in 0..<9 { flow.admitted(bytes: 10); #expect(!flow.isHolding) }
        flow.admitted(bytes: 10)
        #expect(flow.isHolding, "the tenth record reaches the limit")
        flow.admitted(bytes: 10)
        #expect(flow.isHolding)
        for _ in 0..<5 { flow.released(bytes: 10); #expect(flow.isHolding) }
        flow.released(bytes: 10)
        #expect(!flow.isHolding, "five records left: at the low-water mark")

        // Bytes alone can pause; records low is not enough to resume while bytes stay high.
        var bytesBound = FlowControl(maxRecords: 100, maxBytes: 1_000, resumeRatio: 0.5)
        bytesBound.admitted(bytes: 600)
        #expect(!bytesBound.isHolding)
        bytesBound.admitted(bytes: 600)
        #expect(bytesBound.isHolding)
        bytesBound.released(bytes: 100)
        #expect(bytesBound.isHolding)
        bytesBound.released(bytes: 600)
        #expect(!bytesBound.isHolding)
    }

    /// Requests and responses: partition 0 of each topic, and a record of each for one device.
    static let requests = TopicPartition(topic: "notifications.requests", partition: 0)
    static let responses = TopicPartition(topic: "notifications.responses", partition: 0)

    static func message(_ partition: TopicPartition, offset: Int64) -> KafkaMessage {
        KafkaMessage(
            topic: partition.topic, partition: partition.partition, offset: offset,
            key: Array(String(repeating: "ab", count: 32).utf8), value: [1], headers: [], timestamp: nil)
    }

    @Test(
        "ordering keys carry the topic: a response never waits behind a request in the same-numbered partition",
        arguments: [false, true])
    func topicsDoNotShareKeys(byPartition: Bool) {
        var core = WorkerCore(
            flow: FlowControl(maxRecords: 100, maxBytes: 1_000, resumeRatio: 0.5), ordering: byPartition ? .partition : .key)
        core.assign([Self.requests, Self.responses])
        let now = ContinuousClock.now
        let request = Self.message(Self.requests, offset: 0)
        let response = Self.message(Self.responses, offset: 0)
        let laterResponse = Self.message(Self.responses, offset: 1)
        #expect(core.admit([request], at: now).start.count == 1, "the request starts")
        #expect(core.admit([response], at: now).start.count == 1, "the response does not wait behind the request of the other topic")
        #expect(core.admit([laterResponse], at: now).start.isEmpty, "a response waits behind an earlier one of its key")
        // Revoking the requests' partition 0 leaves the responses' partition 0 alone.
        _ = core.beginRevoking([Self.requests])
        #expect(!core.isDrained([Self.responses]))
        #expect(core.inFlight == 3, "the waiting response is not dropped with the other topic's partition")
        _ = core.beginRevoking([Self.responses])
        #expect(core.inFlight == 2, "its own partition's revocation drops it")
    }

    @Test(
        "topics that change the same state share ordering: a command of the repartition topic waits behind a request of its key in the same-numbered partition",
        arguments: [false, true])
    func sharedOrdering(byPartition: Bool) {
        let commands = TopicPartition(topic: "commands", partition: 0)
        var core = WorkerCore(
            flow: FlowControl(maxRecords: 100, maxBytes: 1_000, resumeRatio: 0.5), ordering: byPartition ? .partition : .key,
            sharedOrdering: [commands.topic: Self.requests.topic])
        core.assign([Self.requests, Self.responses, commands])
        let now = ContinuousClock.now
        #expect(core.admit([Self.message(Self.requests, offset: 0)], at: now).start.count == 1, "the request starts")
        #expect(core.admit([Self.message(commands, offset: 0)], at: now).start.isEmpty, "the command of its key waits behind it")
        #expect(core.admit([Self.message(Self.responses, offset: 0)], at: now).start.count == 1, "a response still does not wait")
        // Revoking the commands' partition drops its waiting record, though it waited behind a request.
        _ = core.beginRevoking([commands])
        #expect(core.inFlight == 2)
    }
}
