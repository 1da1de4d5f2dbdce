import Kafka
import Testing

@testable import DispatcherService

/// The worker's state as plain values: assignments, revocations, rewinds and the commit plan.
@Suite("Worker state as values")
struct WorkerStateTests {
    let partition = TopicPartition(topic: "requests", partition: 3)

    func message(_ offset: Int64, key: String = "a") -> KafkaMessage {
        KafkaMessage(
            topic: partition.topic, partition: partition.partition, offset: offset, key: Array(key.utf8), value: [1, 2, 3],
            headers: [], timestamp: nil)
    }

    func state() -> WorkerState {
        WorkerState(flow: FlowControl(maxRecords: 100, maxBytes: 1 << 20, resumeRatio: 0.5))
    }

    /// Admits a record with no ordering key and returns the item that starts.
    func start(_ offset: Int64, in state: inout WorkerState) throws -> WorkItem {
        let (admission, _, _) = state.admit(message(offset), orderingKey: nil)
        guard case .start(let item) = admission else {
            Issue.record("offset \(offset) did not start")
            throw CancellationError()
        }
        return item
    }

    @Test("a revocation that drained while its partition was lost and assigned again removes nothing")
    func revocationByEpoch() throws {
        var state = state()
        state.assign([partition])
        _ = try start(10, in: &state)
        let (_, epochs) = state.beginRevoking([partition])
        #expect(epochs.count == 1)
        // Lost during the drain, then assigned again: a new epoch.
        _ = state.remove([partition])
        state.assign([partition])
        let fresh = try start(20, in: &state)
        let (_, removed) = state.remove(revoked: epochs)
        #expect(removed.isEmpty, "the old revocation must not release the new assignment")
        #expect(state.partitions[partition] != nil)
        #expect(state.isCurrent(fresh))
        _ = state.finish(fresh)
        #expect(state.commitPlan().map(\.offset) == [21])
    }

    @Test("a revocation whose epoch still holds removes the partition")
    func revocationSameEpoch() throws {
        var state = state()
        state.assign([partition])
        let item = try start(10, in: &state)
        let (_, epochs) = state.beginRevoking([partition])
        _ = state.finish(item)
        let (_, removed) = state.remove(revoked: epochs)
        #expect(removed == [partition])
        #expect(state.partitions[partition] == nil)
    }

    @Test("an offset below one received is processed again, never skipped, and the commit waits for both generations")
    func rewind() throws {
        var state = state()
        state.assign([partition])
        let pending = try start(100, in: &state)
        for offset: Int64 in 101...105 { _ = state.finish(try start(offset, in: &state)) }
        #expect(state.commitPlan().map(\.offset) == [100])
        // The consumer went back to 103 (a redelivery, an offset reset): processed again.
        let (admission, _, rewind) = state.admit(message(103), orderingKey: nil)
        #expect(rewind == WorkerState.Rewind(partition: partition, offset: 103, previousNext: 106))
        guard case .start(let rewound) = admission else {
            Issue.record("the rewound offset was not started")
            return
        }
        _ = state.finish(rewound)
        #expect(state.commitPlan().map(\.offset) == [100], "the earlier generation's pending 100 holds the commit")
        _ = state.finish(pending)
        #expect(state.commitPlan().map(\.offset) == [104])
        #expect(state.isDrained(nil))
    }
}
