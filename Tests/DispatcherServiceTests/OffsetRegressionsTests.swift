import Foundation
import Records
import Testing

/// ``OffsetRegressions``, the excuse of the exactly-once tests on Tansu: it must excuse a record
/// only when a commit acknowledged an offset beyond it before a restore started below it.
@Suite("Offsets a broker answered below an acknowledged commit")
struct OffsetRegressionsTests {
    static func line(_ time: String, _ message: String, offsets: String, took: String? = nil) -> String {
        let took = took.map { #","took":"\#($0)""# } ?? ""
        return #"{"label":"notification-dispatcher","level":"debug","message":"\#(message)","metadata":{"kafka.offsets":"\#(offsets)"\#(took)},"source":"DispatcherService","timestamp":"2026-12-04T\#(time)Z"}"#
    }

    static let requests0 = TopicPartition(topic: "notifications.requests", partition: 0)

    @Test("a restore below an earlier commit is a regression, and covers the records between")
    func restoreBelowAnEarlierCommit() {
        let logs = [
            "w1": Self.line("07:07:35.100", "exactly-once: transaction committed", offsets: "notifications.requests[0]@36,notifications.requests[1]@23"),
            "w2": Self.line("07:07:47.150", "state restored", offsets: "notifications.requests[0]@22,notifications.requests[1]@23", took: "0.814153809 seconds"),
        ]
        let regressions = OffsetRegressions(logs: logs)
        #expect(regressions.commitsRead == 1 && regressions.restoresRead == 1)
        #expect(regressions.regressions.count == 1)
        let found = regressions.regressions.first
        #expect(found?.partition == Self.requests0)
        #expect(found?.answered == 22)
        #expect(found?.acknowledged == 36)
        #expect(found?.restoredBy == "w2" && found?.committedBy == "w1")
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 22)) != nil)
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 35)) != nil)
        // Committed by the restore's own start, or beyond the commit: not excused.
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 21)) == nil)
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 36)) == nil)
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 1, offset: 22)) == nil)
    }

    @Test("a commit made after the restore fetched its offsets excuses nothing")
    func commitAfterTheFetch() {
        // The restore's line is logged after it ran: the fetch was `took` earlier, before the commit.
        let logs = [
            "w1": Self.line("07:07:47.000", "exactly-once: transaction committed", offsets: "notifications.requests[0]@36"),
            "w2": Self.line("07:07:47.500", "state restored", offsets: "notifications.requests[0]@22", took: "0.8 seconds"),
        ]
        #expect(OffsetRegressions(logs: logs).regressions.isEmpty)
    }

    @Test("a restore at or above every earlier commit is no regression")
    func restoreAtTheCommit() {
        let logs = [
            "w1": [
                Self.line("07:07:30.000", "exactly-once: transaction committed", offsets: "notifications.requests[0]@20"),
                Self.line("07:07:31.000", "exactly-once: transaction committed", offsets: "notifications.requests[0]@22"),
            ].joined(separator: "\n"),
            "w2": Self.line("07:07:47.150", "state restored", offsets: "notifications.requests[0]@22", took: "0.5 seconds"),
        ]
        #expect(OffsetRegressions(logs: logs).regressions.isEmpty)
    }

    @Test("the killed worker's commit on its way counts as acknowledged at its exit, only when passed and never acknowledged")
    func commitOnItsWayAtTheKill() throws {
        let exited = try #require(ISO8601DateFormatter().date(from: "2026-12-04T07:07:19Z"))
        let killedLog = [
            Self.line("07:07:17.000", "exactly-once: committing a transaction", offsets: "notifications.requests[3]@14"),
            Self.line("07:07:17.010", "exactly-once: transaction committed", offsets: "notifications.requests[3]@14"),
            Self.line("07:07:18.200", "exactly-once: committing a transaction", offsets: "notifications.requests[3]@21"),
            // The worker started again after the kill: its lines are not the killed process's.
            Self.line("07:07:50.000", "exactly-once: committing a transaction", offsets: "notifications.requests[3]@40"),
        ].joined(separator: "\n")
        let logs = [
            "w1": killedLog,
            "w2": Self.line("07:07:28.200", "state restored", offsets: "notifications.requests[3]@17", took: "0.8 seconds"),
        ]
        let killed = OffsetRegressions.KilledCommit(worker: "w1", exited: exited)
        let regressions = OffsetRegressions(logs: logs, killed: killed)
        let found = try #require(regressions.regressions.first)
        #expect(regressions.regressions.count == 1)
        #expect(found.answered == 17 && found.acknowledged == 21, "the commit on its way (21), not the one after the restart (40)")
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 18)) != nil)
        #expect(regressions.covering(TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 21)) == nil)
        // Not passed (the records the kill left open ended aborted): no excuse.
        #expect(OffsetRegressions(logs: logs).regressions.isEmpty)
        // Acknowledged before the kill: an ordinary commit (excused as one); a restore above it is none.
        let acknowledged = [
            "w1": [
                Self.line("07:07:18.200", "exactly-once: committing a transaction", offsets: "notifications.requests[3]@21"),
                Self.line("07:07:18.250", "exactly-once: transaction committed", offsets: "notifications.requests[3]@21"),
                Self.line("07:07:18.900", "exactly-once: committing a transaction", offsets: "notifications.requests[3]@30"),
                Self.line("07:07:18.950", "exactly-once: transaction committed", offsets: "notifications.requests[3]@30"),
            ].joined(separator: "\n"),
            "w2": Self.line("07:07:28.200", "state restored", offsets: "notifications.requests[3]@30", took: "0.8 seconds"),
        ]
        #expect(OffsetRegressions(logs: acknowledged, killed: killed).regressions.isEmpty)
    }

    @Test("a restore after a moment that started a partition at or below a record is found; one before it, or above the record, is not")
    func restoreAfterAMoment() throws {
        let logs = [
            "w2": [
                Self.line("07:06:20.000", "state restored", offsets: "notifications.activities-repartition[2]@4", took: "0.5 seconds"),
                Self.line("07:06:36.000", "state restored", offsets: "notifications.activities-repartition[2]@6", took: "0.5 seconds"),
            ].joined(separator: "\n")
        ]
        let regressions = OffsetRegressions(logs: logs)
        let kill = try #require(ISO8601DateFormatter().date(from: "2026-12-04T07:06:30Z"))
        let command = TopicPartitionOffset(topic: "notifications.activities-repartition", partition: 2, offset: 7)
        let found = regressions.restore(after: kill, startingAtOrBelow: command)
        #expect(found?.worker == "w2" && found?.offsets[command.topicPartition] == 6, "the restore after the kill, started at 6")
        #expect(regressions.restore(after: kill, startingAtOrBelow: TopicPartitionOffset(topic: command.topic, partition: 2, offset: 5)) == nil, "started above the record")
        #expect(regressions.restore(after: kill, startingAtOrBelow: TopicPartitionOffset(topic: command.topic, partition: 3, offset: 7)) == nil, "another partition")
        #expect(regressions.restore(after: kill.addingTimeInterval(10), startingAtOrBelow: command) == nil, "no restore after that moment")
    }
}
