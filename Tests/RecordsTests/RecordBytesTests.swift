import Records
import Testing

/// `RecordBytes`, the view a record's key, value and header values are: a range of a buffer that
/// may hold more, read as a collection indexed from 0.
@Suite("RecordBytes")
struct RecordBytesTests {
    /// A buffer with a prefix and a suffix around `middle`, and the view of `middle` in it.
    static func view(of middle: [UInt8], in buffer: inout [UInt8]) -> RecordBytes {
        buffer = [0xEE, 0xEE, 0xEE] + middle + [0xDD, 0xDD]
        return RecordBytes(buffer, range: 3..<(3 + middle.count))
    }

    @Test("a whole array: its bytes, in order, indexed from 0; the array itself back")
    func wholeArray() {
        let bytes: [UInt8] = [1, 2, 3, 250]
        let view = RecordBytes(bytes)
        #expect(view.count == 4)
        #expect(!view.isEmpty)
        #expect(view.startIndex == 0 && view.endIndex == 4)
        #expect(Array(view) == bytes)
        #expect(view[3] == 250)
        #expect(view.array == bytes)
    }

    @Test("a range of a buffer: only its bytes, indexed from 0, copied out as an array of them alone")
    func rangeOfABuffer() {
        var buffer: [UInt8] = []
        let view = Self.view(of: Array("key".utf8), in: &buffer)
        #expect(view.count == 3)
        #expect(view.startIndex == 0)
        #expect(view[0] == UInt8(ascii: "k") && view[2] == UInt8(ascii: "y"))
        #expect(view.first == UInt8(ascii: "k") && view.last == UInt8(ascii: "y"))
        #expect(view.array == Array("key".utf8))
        #expect(view.array.count == 3)
        #expect(view.description == "key")
    }

    @Test("text: its UTF-8 bytes; a string literal of bytes; the empty view")
    func textAndLiterals() {
        #expect(Array(RecordBytes("é!")) == [0xC3, 0xA9, 0x21])
        let literal: RecordBytes = [0x68, 0x69]
        #expect(literal == RecordBytes("hi"))
        let empty = RecordBytes([UInt8]())
        #expect(empty.isEmpty && empty.count == 0)
        #expect(Array(empty) == [])
        #expect(empty.description == "")
    }

    @Test("leading: the first bytes of the view, never more than it has, none for a negative length")
    func leading() {
        var buffer: [UInt8] = []
        let view = Self.view(of: Array("abcdef".utf8), in: &buffer)
        #expect(view.leading(2) == RecordBytes("ab"))
        #expect(view.leading(6) == view)
        #expect(view.leading(100) == view)
        #expect(view.leading(100).count == 6, "the buffer's bytes after the view are not part of it")
        #expect(view.leading(0).isEmpty)
        #expect(view.leading(-3).isEmpty)
    }

    @Test("equal when the bytes are, wherever they lie; equal views hash alike")
    func equalityAndHashing() {
        var first: [UInt8] = []
        var second: [UInt8] = []
        let inFirst = Self.view(of: Array("token".utf8), in: &first)
        let inSecond = RecordBytes(Array("xxtoken".utf8), range: 2..<7)
        _ = Self.view(of: [], in: &second)
        #expect(inFirst == inSecond)
        #expect(inFirst == RecordBytes("token"))
        #expect(inFirst != RecordBytes("tokeN"))
        #expect(inFirst != RecordBytes("toke"), "a prefix is not equal")
        #expect(RecordBytes([UInt8]()) == RecordBytes(Array("abc".utf8), range: 1..<1), "empty views are equal")
        #expect(Set([inFirst, inSecond, RecordBytes("token"), RecordBytes("other")]).count == 2)
        var hasher = Hasher()
        hasher.combine(inFirst)
        var other = Hasher()
        other.combine(inSecond)
        #expect(hasher.finalize() == other.finalize())
    }

    @Test("in memory: exactly the view's bytes, for the call")
    func unsafeAccess() {
        var buffer: [UInt8] = []
        let view = Self.view(of: [7, 8, 9], in: &buffer)
        #expect(view.withUnsafeBufferPointer { Array($0) } == [7, 8, 9])
        #expect(view.withUnsafeBytes { $0.count } == 3)
        #expect(view.withUnsafeBytes { $0.load(fromByteOffset: 1, as: UInt8.self) } == 8)
        // Generic algorithms read it in place.
        #expect(view.withContiguousStorageIfAvailable { $0.reduce(0, +) } == 24)
        #expect(String(decoding: RecordBytes("héllo"), as: UTF8.self) == "héllo")
    }

    @Test("described as UTF-8 text, invalid sequences replaced")
    func description() {
        #expect(RecordBytes("apns-topic").description == "apns-topic")
        #expect(RecordBytes([0x61, 0xFF, 0x62]).description == "a\u{FFFD}b")
    }
}
