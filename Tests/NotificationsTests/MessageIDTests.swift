@testable import Notifications
import Foundation
import JSON
import Records
import TestSupport
import Testing

@Suite("UUID version 5 and the derived apns-id")
struct MessageIDTests {
    @Test("UUID v5 matches known vectors")
    func uuidV5() {
        #expect(MessageID.uuidV5(namespace: MessageID.urlNamespace, name: "https://example.com").description == "4fd35a71-71ef-5a55-a9d9-aa75c889a6d0")
        let dns: [UInt8] = [0x6B, 0xA7, 0xB8, 0x10, 0x9D, 0xAD, 0x11, 0xD1, 0x80, 0xB4, 0x00, 0xC0, 0x4F, 0xD4, 0x30, 0xC8]
        #expect(MessageID.uuidV5(namespace: dns, name: "python.org").description == "886313e1-3b8a-5372-9b90-0c9aee199e5d")
    }

    @Test("derived apns-id: kafka://topic/partition/offset, stable, version 5, RFC variant")
    func derived() throws {
        let source = TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 12345)
        let id = MessageID.derived(for: source)
        #expect(id.description == "a9d7526c-6f14-58de-9f82-8fdb61411526")
        #expect(MessageID.derived(for: source) == id)
        #expect(MessageID.derived(for: TopicPartitionOffset(topic: "notifications.requests", partition: 0, offset: 0)).description == "915dec77-f895-5b80-b962-8005ff24cda0")
        #expect(MessageID.derived(for: TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 12346)) != id)
        for offset in Int64(0)..<200 {
            let text = MessageID.derived(for: TopicPartitionOffset(topic: "t", partition: 1, offset: offset)).utf8
            #expect(text.count == 36)
            #expect(text[14] == UInt8(ascii: "5"))
            #expect([UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(text[19]))
            #expect(MessageID.normalized(String(decoding: text, as: UTF8.self)) == String(decoding: text, as: UTF8.self))
        }
    }

    @Test("a request without apns-id gets the derived one; a given one is kept, lowercased")
    func validatorUsesDerived() throws {
        let derived = try TestRecord.forValidator().validate().get()
        #expect(derived.apnsID == MessageID.derived(for: TestRecord.validatorSource))
        #expect(!derived.apnsIDWasGiven)
        let again = try TestRecord.forValidator().validate().get()
        #expect(again.apnsID == derived.apnsID)
        let given = try TestRecord.forValidator().header("apns-id", "ABCDEF01-2345-6789-ABCD-EF0123456789").validate().get()
        #expect(given.apnsID.description == "abcdef01-2345-6789-abcd-ef0123456789")
        #expect(given.apnsIDWasGiven)
    }

    @Test("an apns-id's text reads back to the same identifier; anything but 8-4-4-4-12 hexadecimal digits is refused")
    func text() throws {
        let given = "ABCDEF01-2345-6789-abcd-EF0123456789"
        let id = try #require(MessageID(given))
        #expect(id.description == given.lowercased())
        #expect(id.utf8 == Array(given.lowercased().utf8))
        #expect(MessageID(id.description) == id)
        #expect(id.withUTF8 { Array($0) } == id.utf8)
        #expect(MessageID("00000000-0000-0000-0000-000000000000")?.description == "00000000-0000-0000-0000-000000000000")
        #expect(MessageID("ffffffff-ffff-ffff-ffff-ffffffffffff")?.description == "ffffffff-ffff-ffff-ffff-ffffffffffff")
        for refused in [
            "", "abcdef01-2345-6789-abcd-ef012345678", "abcdef01-2345-6789-abcd-ef01234567890", "abcdef0112345-6789-abcd-ef0123456789",
            "abcdef01-2345-6789-abcd-ef012345678g", "abcdef01-2345-6789-abcd-ef012345678\u{10}", "{bcdef01-2345-6789-abcd-ef0123456789",
        ] {
            #expect(MessageID(refused) == nil, "\(refused)")
        }
    }

    @Test("a JSON writer writes an apns-id as its quoted text")
    func written() throws {
        let id = MessageID.derived(for: TopicPartitionOffset(topic: "notifications.requests", partition: 3, offset: 12345))
        var writer = JSONWriter()
        writer.write(messageID: id)
        #expect(writer.bytes == Array("\"a9d7526c-6f14-58de-9f82-8fdb61411526\"".utf8))
    }

    @Test("Hex.lowercase: two lowercase digits per byte, for every byte value, as printf's %02x writes them")
    func lowercaseHex() {
        let bytes = (0...255).map(UInt8.init)
        #expect(Hex.lowercase(bytes) == bytes.map { String(format: "%02x", $0) }.joined())
        #expect(Hex.lowercase([]) == "")
        #expect(Hex.lowercase([0x00, 0x0F, 0xA0, 0xFF]) == "000fa0ff")
    }

    @Test("Hex.digits: the eight lowercase digits of a 32-bit value, as printf's %08x writes them, at every nibble edge and at random")
    func eightDigits() {
        func text(_ value: UInt32) -> String {
            withUnsafeBytes(of: Hex.digits(of: value).bigEndian) { String(decoding: $0, as: UTF8.self) }
        }
        var values: [UInt32] = [0, 1, 9, 10, 15, 16, 0x9999_9999, 0xAAAA_AAAA, 0xFFFF_FFFF, 0x0123_4567, 0x89AB_CDEF, 0x8000_0000]
        // Every digit value in every position: a carry into the next byte would show here.
        for position in 0..<8 { for nibble in 0..<16 { values.append(UInt32(nibble) << (position * 4)) } }
        var random = SeededGenerator(seed: 0x0E_C0DE)
        for _ in 0..<10_000 { values.append(UInt32.random(in: .min ... .max, using: &random)) }
        let wrong = values.filter { text($0) != String(format: "%08x", $0) }
        #expect(wrong.isEmpty, "\(wrong.prefix(5).map { "\($0): \(text($0))" })")
    }

    @Test("an apns-id's digits are read as a plain digit-by-digit reading reads them: bytes replaced at random, any case")
    func digitsAsReadOneByOne() {
        /// The lowercase text of 8-4-4-4-12 hexadecimal digits, read one at a time (Foundation's
        /// UUID(uuidString:) is no reference: it takes a dash or a space in place of a digit).
        func reference(_ text: [UInt8]) -> String? {
            guard text.count == 36 else { return nil }
            var lower: [UInt8] = []
            for (position, byte) in text.enumerated() {
                if [8, 13, 18, 23].contains(position) {
                    guard byte == UInt8(ascii: "-") else { return nil }
                    lower.append(byte)
                    continue
                }
                let folded = (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte) ? byte | 0x20 : byte
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(folded) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(folded) else {
                    return nil
                }
                lower.append(folded)
            }
            return String(decoding: lower, as: UTF8.self)
        }
        var random = SeededGenerator(seed: 0xA9_D7)
        // Characters at the edges of the digit and letter ranges, and a few others.
        let replacements = Array("0123456789abcdefABCDEF/:@G`g-x \u{7F}".utf8) + [0x00, 0x10, 0x19, 0x80, 0xC3, 0xFF]
        var outcomes = (valid: 0, invalid: 0)
        for _ in 0..<2_000 {
            var text = Array(UUID().uuidString.utf8)
            if Bool.random(using: &random) { text = Array(String(decoding: text, as: UTF8.self).lowercased().utf8) }
            for _ in 0..<Int.random(in: 0...2, using: &random) {
                text[Int.random(in: 0..<36, using: &random)] = replacements.randomElement(using: &random) ?? 0
            }
            let expected = reference(text)
            #expect(MessageID(text: RecordBytes(text))?.description == expected, "\(String(decoding: text, as: UTF8.self))")
            if expected == nil { outcomes.invalid += 1 } else { outcomes.valid += 1 }
        }
        #expect(outcomes.valid > 500 && outcomes.invalid > 500, "\(outcomes)")
    }
}
