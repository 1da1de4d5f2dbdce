import Testing
import TestSupport

@testable import DispatcherService

@Suite("Partition offset tracking")
struct PartitionOffsetTrackerTests {
    @Test("nothing received: nothing to commit")
    func empty() {
        let tracker = PartitionOffsetTracker()
        #expect(tracker.committableOffset == nil)
        #expect(tracker.isDrained)
    }

    @Test("commits up to the lowest offset not done, never past it")
    func lowestNotDone() {
        var tracker = PartitionOffsetTracker()
        for offset in Int64(10)...14 { tracker.received(offset) }
        #expect(tracker.committableOffset == 10)
        tracker.finished(12)
        tracker.finished(13)
        #expect(tracker.committableOffset == 10)
        tracker.finished(10)
        #expect(tracker.committableOffset == 11)
        tracker.finished(11)
        #expect(tracker.committableOffset == 14)
        tracker.finished(14)
        #expect(tracker.committableOffset == 15)
        #expect(tracker.isDrained)
    }

    @Test("gaps in offsets (compaction) do not hold the commit back")
    func gaps() {
        var tracker = PartitionOffsetTracker()
        tracker.received(3)
        tracker.received(7)
        tracker.received(20)
        tracker.finished(7)
        #expect(tracker.committableOffset == 3)
        tracker.finished(3)
        #expect(tracker.committableOffset == 20)
        tracker.finished(20)
        #expect(tracker.committableOffset == 21)
    }

    @Test("a redelivered offset is refused; finishing twice counts once")
    func redelivery() {
        var tracker = PartitionOffsetTracker()
        let first = tracker.received(5)
        let again = tracker.received(5)
        let older = tracker.received(4)
        #expect(first)
        #expect(!again)
        #expect(!older)
        #expect(tracker.pendingCount == 1)
        tracker.finished(5)
        tracker.finished(5)
        #expect(tracker.pendingCount == 0)
        #expect(tracker.committableOffset == 6)
    }

    @Test("random completion order: the commit is always the lowest unfinished offset")
    func randomOrder() {
        var generator = SeededGenerator(seed: 42)
        var tracker = PartitionOffsetTracker()
        var unfinished = Set<Int64>()
        var nextOffset: Int64 = 0
        for _ in 0..<20_000 {
            if unfinished.count < 500, generator.next() % 3 != 0 {
                nextOffset += Int64(1 + generator.next() % 2)
                tracker.received(nextOffset)
                unfinished.insert(nextOffset)
            } else if let offset = unfinished.randomElement(using: &generator) {
                tracker.finished(offset)
                unfinished.remove(offset)
            }
            let expected = unfinished.min() ?? (nextOffset + 1)
            #expect(tracker.committableOffset == expected)
            #expect(tracker.pendingCount == unfinished.count)
        }
    }

    @Test("an offset never received, or released already, changes nothing")
    func unknownOffsets() {
        var tracker = PartitionOffsetTracker()
        for offset in [Int64(3), 4, 7, 8] { tracker.received(offset) }
        // 5 and 6 were never received (a gap): the entry where their distance from the front
        // points holds another offset.
        tracker.finished(5)
        tracker.finished(6)
        tracker.finished(9)
        #expect(tracker.pendingCount == 4)
        tracker.finished(3)
        #expect(tracker.committableOffset == 4)
        // Released from the front: before the window.
        tracker.finished(3)
        #expect(tracker.pendingCount == 3)
        tracker.finished(8)
        tracker.finished(4)
        #expect(tracker.committableOffset == 7)
        tracker.finished(7)
        #expect(tracker.committableOffset == 9)
        #expect(tracker.isDrained)
    }

    @Test("admission times survive the tracker's storage: the overdue count and the oldest pending")
    func admissionTimes() {
        var tracker = PartitionOffsetTracker()
        let start = ContinuousClock.now
        tracker.received(1, at: start)
        tracker.received(2, at: start + .seconds(5))
        tracker.received(3, at: start + .seconds(10))
        #expect(tracker.oldestPendingAdmission == start)
        #expect(tracker.pendingCount(admittedBefore: start + .seconds(6)) == 2)
        tracker.finished(1)
        #expect(tracker.oldestPendingAdmission == start + .seconds(5))
        #expect(tracker.pendingCount(admittedBefore: start + .seconds(6)) == 1)
        #expect(tracker.pendingCount(admittedBefore: start) == 0)
    }
}
