@testable import JSON
import Testing
import TestSupport

@Suite("UTF-8 validation")
struct UTF8CheckTests {
    @Test("agrees with the standard library on random and boundary byte sequences")
    func agreesWithStandardLibrary() {
        var random = SeededGenerator(seed: 99)
        let interesting: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        for _ in 0..<50_000 {
            let bytes = (0..<Int.random(in: 0...6, using: &random)).map { _ in interesting.randomElement(using: &random) ?? 0 }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            #expect(bytes.withUnsafeBufferPointer(UTF8Check.isValid) == expected, "\(bytes)")
        }
    }
}
