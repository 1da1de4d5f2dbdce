import JSON
import Testing

/// What the fuzzer's differential with Foundation found (docs/testing.md, "Fuzzing"), each with
/// the bytes it found it with: where the parser and Foundation's `JSONSerialization` read a
/// document differently and the parser is right.
@Suite("fuzzer findings: JSON")
struct FuzzFindingsTests {
    /// The payload of the input the fuzzer reported (a Live Activity's `attributes` whose key
    /// begins with U+FEFF written as its UTF-8 bytes, EF BB BF).
    static let leadingMark: [UInt8] =
        Array(#"{"aps":{"event":"start","timestamp":1800000000,"attributes-type":"MatchAttributes","attributes":{""#.utf8)
        + [0xEF, 0xBB, 0xBF] + Array(#"home":"Lyon"},"content-state":{"score":"0-0"},"alert":"Kick-off"}}"#.utf8)

    @Test("a string's leading U+FEFF is a character of the string, kept (Foundation drops it)")
    func leadingByteOrderMarkIsKept() throws {
        let value = try JSONValue(parsing: Self.leadingMark)
        let attributes = try #require(value[path: ["aps", "attributes"]]?.objectValue)
        #expect(attributes.keys.map { Array($0.unicodeScalars) } == [["\u{FEFF}", "h", "o", "m", "e"]])
        #expect(attributes["home"] == nil)
        // Written back as it came, the mark as its three bytes (JSONWriter escapes no such character).
        #expect(value.serialized() == Self.leadingMark)
        // A string that begins with the escaped mark is the same string.
        #expect(try JSONValue(parsing: Array(#""\ufeffv""#.utf8)) == .string("\u{FEFF}v"))
    }
}
