import Records
import Testing

/// `RecordBytes`, the view a record's key, value and header values are: it reads like an array
/// (indices from 0) whatever its place in the buffer, and compares and hashes by its bytes.
@Suite struct RecordBytesTests {
    let buffer = Array("tokenvalue10".utf8)

    @Test func aViewReadsFromZeroWhereverItIsInItsBuffer() {
        let value = RecordBytes(buffer, range: 5..<10)
        #expect(value.count == 5)
        #expect(value.startIndex == 0 && value.endIndex == 5)
        #expect(value[0] == UInt8(ascii: "v") && value[4] == UInt8(ascii: "e"))
        #expect(Array(value) == Array("value".utf8))
        #expect(String(decoding: value, as: UTF8.self) == "value")
        #expect(value.description == "value")
        #expect(RecordBytes(buffer, range: 12..<12).isEmpty)
    }

    @Test func equalBytesAreEqualAndHashAlikeWhateverTheirBuffer() {
        let inBuffer = RecordBytes(buffer, range: 10..<12)
        let alone = RecordBytes("10")
        #expect(inBuffer == alone)
        #expect(inBuffer.hashValue == alone.hashValue)
        #expect(inBuffer != RecordBytes("11"))
        #expect(inBuffer != RecordBytes("100"))
        #expect(Set([inBuffer, alone, RecordBytes(buffer, range: 0..<5)]).count == 2)
    }

    @Test func leadingStaysInTheBufferAndClamps() {
        let value = RecordBytes(buffer, range: 5..<10)
        #expect(value.leading(3) == RecordBytes("val"))
        #expect(value.leading(50) == value)
        #expect(value.leading(-1).isEmpty)
        let start = { (bytes: RecordBytes) in bytes.withUnsafeBytes { $0.baseAddress } }
        #expect(start(value.leading(3)) == start(value))
    }

    @Test func aWholeViewHandsBackItsBufferAndAPartCopiesOnlyItself() {
        let whole = RecordBytes(buffer)
        #expect(whole.array == buffer)
        #expect(whole.array.withUnsafeBytes { $0.baseAddress } == buffer.withUnsafeBytes { $0.baseAddress })
        #expect(RecordBytes(buffer, range: 0..<5).array == Array("token".utf8))
    }
}
