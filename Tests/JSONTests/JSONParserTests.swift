import JSON
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONValue(parsing: Array(text.utf8))
    }

    static let valid: [(String, JSONValue)] = [
        ("null", nil), ("true", true), ("false", false), (" 0 ", 0), ("-0", .number(JSONNumber(text: "-0")!)),
        (#""""#, ""), (#""a\"b\\c\/d\b\f\n\r\t""#, "a\"b\\c/d\u{8}\u{c}\n\r\t"),
        (#""\u00e9\u00E9""#, "éé"), (#""\ud83d\ude00""#, "😀"), (#""\uD834\uDD1E""#, "𝄞"), (#""é😀""#, "é😀"),
        ("[]", []), ("{}", [:]), (" [ 1 , [ ] , { } ] ", [1, [], [:]]), (#"{"a":{"b":[null]}}"#, ["a": ["b": [nil]]]),
        ("\t\r\n[1]\n", [1]), (#"{"a":1,"a":2}"#, ["a": 2]),
    ]

    @Test("valid documents", arguments: valid)
    func validDocument(_ text: String, _ expected: JSONValue) throws {
        #expect(try Self.parse(text) == expected)
    }

    static let invalid: [String] = [
        "", " ", "nul", "tru", "True", "[1,]", "[,1]", "{,}", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "[1 2]", "01", "1.", ".5", "-",
        "+1", "1e", "1e+", "0x10", "NaN", "Infinity", #""abc"#, #""\x""#, #""\u12""#, #""\u12G4""#, #""\ud800""#, #""\udc00""#,
        #""\ud800\u0041""#, #""\ud800x""#, "\"tab\there\"", "\"new\nline\"", "[1]x", "{} {}", "[", "{", #"{"a""#, #"{"a":"#,
        "]", "}", "[}", "{]", "\u{FEFF}{}", "'a'", "[1]]",
    ]

    @Test("invalid documents", arguments: invalid)
    func invalidDocument(_ text: String) {
        #expect(throws: JSONParseError.self) { try Self.parse(text) }
    }

    @Test("invalid UTF-8 is an error, inside and outside escapes")
    func invalidUTF8() throws {
        let cases: [[UInt8]] = [
            [0x22, 0xC3, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
            [0x22, 0x5C, 0x6E, 0xE2, 0x82, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],
        ]
        for bytes in cases {
            #expect(throws: JSONParseError.self, "\(bytes)") { try JSONValue(parsing: bytes) }
        }
        #expect(try JSONValue(parsing: [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == "😀")
    }

    /// Bytes a string's walk must stop at, or steps over, each with what parsing a string of
    /// plain bytes holding it gives: its value, or nil for an error.
    static let stringStops: [(bytes: [UInt8], value: String?)] = [
        (Array(#"\n"#.utf8), "\n"), (Array(#"\""#.utf8), "\""), (Array(#"\u00e9"#.utf8), "é"), ([0xC3, 0xA9], "é"),
        ([0xF0, 0x9F, 0x98, 0x80], "😀"), ([0x7F], "\u{7F}"), ([0x20], " "), ([0x1F], nil), ([0x00], nil), ([0xFF], nil),
        ([0xC3], nil), ([0x80], nil),
    ]

    /// Up to 90 bytes: a string's first sixteen, then two and more chunks of the thirty-two-byte
    /// step (AVX2, where the CPU has it), then the sixteen-, eight- and one-byte tails.
    @Test("a stop at every position of strings up to 90 bytes: the thirty-two-, sixteen- and eight-byte steps miss none")
    func stopAtEveryPosition() throws {
        for length in 0...90 {
            for position in 0...length {
                for stop in Self.stringStops {
                    let before = [UInt8](repeating: UInt8(ascii: "a"), count: position)
                    let after = [UInt8](repeating: UInt8(ascii: "b"), count: length - position)
                    // As a whole document and as a key with more after it, so that the buffer goes on past the string.
                    let string = [0x22] + before + stop.bytes + after + [0x22]
                    let object = Array(#"{"#.utf8) + string + Array(#":1,"k":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#.utf8)
                    let text = stop.value.map { String(repeating: "a", count: position) + $0 + String(repeating: "b", count: length - position) }
                    if let text {
                        #expect(try JSONValue(parsing: string) == .string(text), "\(string)")
                        #expect(try JSONValue(parsing: object)[path: [text]] == 1, "\(object)")
                    } else {
                        #expect(throws: JSONParseError.self, "\(string)") { try JSONValue(parsing: string) }
                        #expect(throws: JSONParseError.self, "\(object)") { try JSONValue(parsing: object) }
                    }
                }
            }
        }
    }

    @Test("errors name the offset")
    func errorOffset() throws {
        let error = try #require(throws: JSONParseError.self) { try Self.parse(#"{"a":tru}"#) }
        #expect(error.offset == 5)
        #expect(error.description.contains("byte 5"))
    }

    @Test("depth 512 is accepted, 513 refused")
    func depthLimit() throws {
        for (depth, accepted) in [(512, true), (513, false)] {
            let arrays = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let objects = String(repeating: #"{"a":"#, count: depth - 1) + "{}" + String(repeating: "}", count: depth - 1)
            for text in [arrays, objects] {
                if accepted {
                    #expect(throws: Never.self) { try Self.parse(text) }
                } else {
                    let error = try #require(throws: JSONParseError.self) { try Self.parse(text) }
                    #expect(error.message.contains("512"))
                }
            }
        }
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: Array("[[[]]]".utf8), maxDepth: 2) }
        #expect(throws: Never.self) { try JSONValue(parsing: Array("[[]]".utf8), maxDepth: 2) }
    }

    @Test("ten thousand and a million nested arrays fail at the limit without exhausting the stack")
    func deepNesting() throws {
        for depth in [10_000, 1_000_000] {
            let bytes = [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth)
            let error = try #require(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
            #expect(error.offset == 512)
        }
    }

    @Test("numbers keep their written text")
    func numberText() throws {
        let text = "[1.0,-12e3,123456789012345678901234567890,0.1e-7,1E+2,-0.0]"
        let value = try Self.parse(text)
        #expect(value.arrayValue?.compactMap { $0.numberValue?.text } == ["1.0", "-12e3", "123456789012345678901234567890", "0.1e-7", "1E+2", "-0.0"])
        #expect(value.compactText == text)
    }

    @Test("a repeated key keeps its first position and its last value")
    func repeatedKeys() throws {
        let value = try Self.parse(#"{"a":1,"b":2,"a":3}"#)
        #expect(value.objectValue?.keys == ["a", "b"])
        #expect(value.compactText == #"{"a":3,"b":2}"#)
        // Large objects switch to an index; the rule stays the same.
        let many = (0..<100).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        let big = try Self.parse("{" + many + #","k7":"again","k99":null}"#)
        #expect(big.objectValue?.count == 100)
        #expect(big.objectValue?["k7"] == "again")
        #expect(big.objectValue?.keys.last == "k99")
    }

    @Test("any contiguous or non-contiguous collection of bytes parses")
    func collections() throws {
        let bytes = Array(#"{"a":[1,2]}"#.utf8)
        #expect(try JSONValue(parsing: bytes[...]) == ["a": [1, 2]])
        #expect(try JSONValue(parsing: bytes.lazy.map { $0 }) == ["a": [1, 2]])
    }
}

@Suite("JSON values")
struct JSONValueTests {
    @Test("number equality is by value, spelling aside")
    func numberEquality() throws {
        let equal: [(String, String)] = [("1", "1.0"), ("1", "1e0"), ("100", "1E2"), ("0", "-0"), ("0.5", "5e-1"), ("-12e3", "-12000"), ("0", "0.000e10")]
        for (a, b) in equal {
            let lhs = try #require(JSONNumber(text: a)), rhs = try #require(JSONNumber(text: b))
            #expect(lhs == rhs, "\(a) == \(b)")
            #expect(lhs.hashValue == rhs.hashValue)
        }
        let different: [(String, String)] = [("1", "2"), ("123456789012345678901234567890", "123456789012345678901234567891"), ("1", "-1"), ("0.1", "0.10000000000000001")]
        for (a, b) in different {
            #expect(JSONNumber(text: a) != JSONNumber(text: b), "\(a) != \(b)")
        }
    }

    @Test("number text, integer test and conversions")
    func numberConversions() {
        #expect(JSONNumber(text: "01") == nil)
        #expect(JSONNumber(text: " 1") == nil)
        #expect(JSONNumber(text: "1.") == nil)
        #expect(JSONNumber(text: "-1.5e-3")?.isInteger == false)
        #expect(JSONNumber(text: "42")?.isInteger == true)
        #expect(JSONNumber(text: "42")?.intValue == 42)
        #expect(JSONNumber(text: "4.2e1")?.intValue == 42)
        #expect(JSONNumber(text: "4.25e1")?.intValue == nil)
        #expect(JSONNumber(text: "9223372036854775807")?.intValue == Int.max)
        #expect(JSONNumber(text: "9223372036854775808")?.intValue == nil)
        #expect(JSONNumber(text: "-9.223372036854775808e18")?.intValue == Int.min)
        #expect(JSONNumber(text: "0.25")?.doubleValue == 0.25)
        #expect(JSONNumber(3).text == "3")
        #expect(JSONNumber(2.0).text == "2.0")
        #expect(JSONNumber(0.1).text == "0.1")
        #expect(JSONNumber(1e300).text == "1e300")
        #expect(JSONNumber(Double.nan).text == "0")
        #expect(JSONNumber(text: JSONNumber(-2.5e-8).text) != nil)
    }

    @Test("objects keep order; setting an existing key keeps its place; nil removes")
    func objectEditing() {
        var object: JSONObject = ["b": 1, "a": 2]
        object["c"] = 3
        object["b"] = "x"
        #expect(object.keys == ["b", "a", "c"])
        object["a"] = nil
        #expect(object.keys == ["b", "c"])
        #expect(object.removeValue(forKey: "b") == "x")
        #expect(object.removeValue(forKey: "b") == nil)
        #expect(object.count == 1 && !object.isEmpty)
        #expect(Array(object).map(\.key) == ["c"])
        #expect(JSONObject([("k", 1), ("k", 2)]) == ["k": 2])
    }

    @Test("strings compare by exact scalars, not canonical equivalence")
    func exactStrings() {
        let composed: JSONValue = .string("\u{E9}")
        let decomposed: JSONValue = .string("e\u{301}")
        #expect(composed != decomposed)
        var object = JSONObject()
        object["\u{E9}"] = 1
        #expect(object["e\u{301}"] == nil)
    }

    @Test("equality ignores key order; hashes agree")
    func objectEquality() {
        let a: JSONValue = ["x": [1, 2.5, "s"], "y": ["z": nil]]
        let b: JSONValue = ["y": ["z": nil], "x": [1.0, 2.5, "s"]]
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != ["x": [2, 1, "s"], "y": ["z": nil]])
        #expect(Set([a, b]).count == 1)
    }

    @Test("path lookup walks objects only")
    func pathLookup() {
        let value: JSONValue = ["aps": ["alert": ["title": "T"]], "list": [["a": 1]]]
        #expect(value[path: ["aps", "alert", "title"]] == "T")
        #expect(value[path: ["aps", "missing"]] == nil)
        #expect(value[path: ["list", "0"]] == nil)
        #expect(value[path: []] == value)
    }

    @Test("serialisation is compact and escapes what JSON needs")
    func serialisation() {
        let value: JSONValue = ["s": "a\"b\\c/d\n\u{1}\u{7F}é😀\u{2028}", "n": nil, "b": [true, false], "o": [:], "a": []]
        #expect(value.compactText == #"{"s":"a\"b\\c/d\n\u0001"# + "\u{7F}é😀\u{2028}" + #"","n":null,"b":[true,false],"o":{},"a":[]}"#)
        #expect(JSONValue.string("\u{8}\u{c}\r\t\u{1f}").compactText == #""\b\f\r\t\u001f""#)
    }
}
