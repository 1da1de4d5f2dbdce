import Records
import Testing

/// `RecordHeader` and the positions of a record (`TopicPartition`, `TopicPartitionOffset`).
@Suite("Record headers and positions")
struct RecordHeaderTests {
    @Test("a header's value from text, bytes or a view: the same bytes, the name as given")
    func values() {
        let fromText = RecordHeader(name: "apns-topic", value: "com.example.app")
        let fromBytes = RecordHeader(name: "apns-topic", value: Array("com.example.app".utf8))
        let fromView = RecordHeader(name: "apns-topic", value: RecordBytes(Array("xcom.example.app".utf8), range: 1..<16))
        #expect(fromText == fromBytes)
        #expect(fromText == fromView)
        #expect(fromText.value.map { Array($0) } == Array("com.example.app".utf8))
        #expect(RecordHeader(name: "APNS-Topic", value: "x").name == "APNS-Topic", "kept as received: no case folding")
        #expect(RecordHeader(name: "APNS-Topic", value: "x") != RecordHeader(name: "apns-topic", value: "x"))
    }

    @Test("a null value (Kafka's header without a value) is not an empty one")
    func nullIsNotEmpty() {
        let null = RecordHeader(name: "apns-priority", value: nil as RecordBytes?)
        let nullFromBytes = RecordHeader(name: "apns-priority", value: nil as [UInt8]?)
        let empty = RecordHeader(name: "apns-priority", value: "")
        #expect(null.value == nil)
        #expect(null == nullFromBytes)
        #expect(empty.value == RecordBytes([UInt8]()))
        #expect(null != empty)
        #expect(Set([null, nullFromBytes, empty]).count == 2)
    }

    @Test("a header's value can be changed in place")
    func mutable() {
        var header = RecordHeader(name: "apns-id", value: "a")
        header.value = RecordBytes("b")
        header.name = "apns-collapse-id"
        #expect(header == RecordHeader(name: "apns-collapse-id", value: "b"))
    }

    @Test("a topic-partition reads topic[partition]; positions are equal by all three parts")
    func positions() {
        let partition = TopicPartition(topic: "notifications.requests", partition: 3)
        #expect(partition.description == "notifications.requests[3]")
        let position = TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 41)
        #expect(position.topicPartition == partition)
        #expect(position != TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 42))
        #expect(position != TopicPartitionOffset(topic: "notifications.requests", partition: 2, offset: 41))
        #expect(position != TopicPartitionOffset(topic: "notifications.responses", partition: 3, offset: 41))
        #expect(TopicPartition(topic: "a", partition: 0) != TopicPartition(topic: "a", partition: 1))
        let committed: Set = [position, TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 41)]
        #expect(committed.count == 1)
    }
}
