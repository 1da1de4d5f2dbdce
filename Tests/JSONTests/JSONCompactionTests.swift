import JSON
import TestSupport
import Testing

/// ``JSONWriter/appendCompact(json:form:)`` must write what the tree writes for the same text
/// (`JSONValue(parsing:).serialized()`): the compact form a delivery carries whatever style the
/// provider wrote its payload in. Checked on generated documents in every style, escapes of every
/// kind, repeated and escaped keys, against the parser and writer that the tree path uses.
@Suite("Compact JSON written from the text, without a tree")
struct JSONCompactionTests {
    /// The text's compact form written from its bytes in `form`.
    static func compacted(_ text: [UInt8], form: JSONForm) -> [UInt8] {
        var writer = JSONWriter(capacity: 16)
        text.withUnsafeBufferPointer { writer.appendCompact(json: $0, form: form) }
        return writer.finish()
    }

    /// What the tree path writes for the text.
    static func serialized(_ text: [UInt8]) throws -> [UInt8] {
        try JSONValue(parsing: text).serialized()
    }

    static let examples: [(text: String, plain: Bool)] = [
        (#"{"aps": {"alert": {"title": "Ann", "body": "Hi"}, "badge": 1}, "x": [1, 2.50, -0, 1e3, true, false, null]}"#, true),
        ("{\n  \"aps\": {\n    \"alert\": \"Hello\"\n  }\n}", true),
        ("\t {\"a\" :\r\n [ ] , \"b\":{ } }  ", true),
        (#"{"s": "Esc \"quoted\" \u00e9 \/ \n \u000A \u0008 \u001F \u001f \u0022 \u005C \u005c \ud83d\ude00 \uD834\uDD1E \u2028 \u0041"}"#, true),
        (#"{"s": "é😀 plain non-ASCII, tab\tand\\backslash"}"#, true),
        (#"{"a": 1, "a": 2}"#, false),
        (#"{"a": {"x": 1}, "b": 2, "a": {"y": [1, {"z": 1, "z": 3}]}}"#, false),
        (#"{"\u0061": 1, "a": 2, "b\/": 3, "b/": 4}"#, false),
        (#"[{"k": 1, "k": null}, {"k": "v"}]"#, false),
        (#"  "just a string \u00e9"  "#, true),
        ("  12.5e-3 ", true),
    ]

    @Test("examples: every style and escape, repeated and escaped keys", arguments: examples)
    func example(_ example: (text: String, plain: Bool)) throws {
        let text = Array(example.text.utf8)
        let expected = try Self.serialized(text)
        #expect(Self.compacted(text, form: .general) == expected)
        if example.plain { #expect(Self.compacted(text, form: .plain) == expected) }
    }

    @Test("compact text is copied as it is")
    func compactForm() throws {
        let text = Array(#"{"aps":{"alert":"x"},"n":1.0}"#.utf8)
        #expect(Self.compacted(text, form: .compact) == text)
        #expect(try Self.serialized(text) == text)
    }

    @Test("generated documents in compact, spaced and pretty styles, with random escapes and repeated keys")
    func generated() throws {
        var generator = SeededGenerator(seed: 0x5EED_C0DE)
        var checked = 0
        for round in 0..<4_000 {
            let repeatsKeys = round % 4 == 3
            var printer = Printer(style: Printer.Style.allCases[round % 3], repeatsKeys: repeatsKeys, escapesKeys: round % 8 == 5)
            let text = printer.document(depth: 0, generator: &generator)
            let expected = try Self.serialized(text)
            let general = Self.compacted(text, form: .general)
            #expect(general == expected, "general form of \(String(decoding: text, as: UTF8.self))")
            if !printer.madeUnplain {
                let plain = Self.compacted(text, form: .plain)
                #expect(plain == expected, "plain form of \(String(decoding: text, as: UTF8.self))")
            }
            checked += 1
        }
        #expect(checked == 4_000)
    }

    /// The text's compact form written between the whitespace runs a scan of it noted, in runs
    /// of `capacity`; nil when the scanner leaves the text to the parser.
    static func compactedBetweenRuns(_ text: [UInt8], capacity: Int, runsOf other: [UInt8]? = nil) -> (bytes: [UInt8], complete: Bool)? {
        let storage = UnsafeMutableBufferPointer<UInt32>.allocate(capacity: 2 * capacity)
        defer { storage.deallocate() }
        var whitespace = WhitespaceRuns(storage: storage)
        var isCompact = false
        let scanned = (other ?? text).withUnsafeBufferPointer { bytes in
            (try? JSONScanner.withScanner(over: bytes, maxDepth: 64, recording: &whitespace) { scanner throws(JSONScanner.Unusual) in
                try scanner.skipValue()
                try scanner.finish()
                isCompact = scanner.isCompact
            }) != nil
        }
        guard scanned else { return nil }
        var writer = JSONWriter(capacity: 16)
        text.withUnsafeBufferPointer { writer.appendCompact(json: $0, form: isCompact ? .compact : .plain, whitespace: whitespace) }
        return (writer.finish(), whitespace.isComplete)
    }

    @Test("the whitespace a scan noted is dropped by copying between its runs: the same bytes, in every style")
    func betweenRuns() throws {
        var generator = SeededGenerator(seed: 0x5EED_7AB5)
        var complete = 0
        var scanned = 0
        var overflowed = 0
        for round in 0..<3_000 {
            var printer = Printer(style: Printer.Style.allCases[round % 3], repeatsKeys: false, escapesKeys: false)
            let text = printer.document(depth: 0, generator: &generator)
            let expected = try Self.serialized(text)
            guard let (bytes, isComplete) = Self.compactedBetweenRuns(text, capacity: 512) else { continue }
            scanned += 1
            #expect(bytes == expected, "between runs: \(String(decoding: text, as: UTF8.self))")
            // Only an escape the writer rewrites leaves a scanned document to the usual walk.
            #expect(isComplete || text.contains(UInt8(ascii: "\\")))
            guard isComplete else { continue }
            complete += 1
            // Too many runs for the storage: the usual walk, the same bytes.
            let (few, fewComplete) = try #require(Self.compactedBetweenRuns(text, capacity: 2))
            #expect(few == expected)
            if !fewComplete { overflowed += 1 }
        }
        // Half the generated documents are scanned (the rest the scanner leaves to the parser);
        // most of those are complete, and some have more runs than two.
        #expect(scanned > 1_200)
        #expect(complete > 1_000)
        #expect(overflowed > 150)
    }

    @Test("runs noted over one document are not used for another of the same length")
    func runsOfAnotherDocument() throws {
        let first = Array(#"{"a": 1, "b": [1, 2]}"#.utf8)
        let second = Array(#"{"a":  1,"b": [1,2 ]}"#.utf8)
        #expect(first.count == second.count)
        let (bytes, _) = try #require(Self.compactedBetweenRuns(second, capacity: 16, runsOf: first))
        #expect(bytes == Array(#"{"a":1,"b":[1,2]}"#.utf8))
    }

    @Test("a scan that fails leaves no runs to use")
    func failedScan() {
        let text = Array(#"{"a": 1, "a": 2}"#.utf8)
        #expect(Self.compactedBetweenRuns(text, capacity: 16) == nil)
    }

    @Test("bytes that are not JSON are written as they are, never trapped on")
    func invalidBytes() {
        for text in ["{", #"{"a""#, #"{"a":"#, #""\u12"#, #"{"a":1,}"#, #"[1,"#, "\\", #""\"#] {
            let bytes = Array(text.utf8)
            _ = Self.compacted(bytes, form: .plain)
            #expect(Self.compacted(bytes, form: .general) == bytes, "\(text)")
        }
    }

    /// Prints random JSON in a style, choosing escapes at random; remembers whether it wrote
    /// anything the plain form does not cover (a repeated or escaped key, an object of more than
    /// ``JSONScanner/maximumKeys`` keys).
    struct Printer {
        enum Style: CaseIterable { case compact, spaced, pretty }

        let style: Style
        let repeatsKeys: Bool
        let escapesKeys: Bool
        private(set) var madeUnplain = false
        private var output: [UInt8] = []

        init(style: Style, repeatsKeys: Bool, escapesKeys: Bool) {
            self.style = style
            self.repeatsKeys = repeatsKeys
            self.escapesKeys = escapesKeys
        }

        mutating func document(depth: Int, generator: inout SeededGenerator) -> [UInt8] {
            output = []
            if style == .pretty, Bool.random(using: &generator) { output += Array(" \n".utf8) }
            value(depth: depth, generator: &generator, forceContainer: true)
            if style != .compact { output += Array(" \n".utf8) }
            return output
        }

        private mutating func newline(_ depth: Int) {
            guard style == .pretty else { return }
            output.append(0x0A)
            output += Array(repeating: 0x20, count: depth * 2)
        }

        private mutating func value(depth: Int, generator: inout SeededGenerator, forceContainer: Bool = false) {
            let choice = forceContainer ? Int.random(in: 0...1, using: &generator) : Int.random(in: 0...(depth > 4 ? 5 : 7), using: &generator)
            switch choice {
            case 0, 6: object(depth: depth, generator: &generator)
            case 1, 7: array(depth: depth, generator: &generator)
            case 2: string(generator: &generator, isKey: false)
            case 3:
                let numbers = ["0", "-0", "1", "-12", "3.25", "1e3", "1E-2", "0.000", "123456789012345678901234567890", "2.5e+10"]
                output += Array(numbers.randomElement(using: &generator)!.utf8)
            case 4: output += Array(["true", "false", "null"].randomElement(using: &generator)!.utf8)
            default: string(generator: &generator, isKey: false)
            }
        }

        private mutating func object(depth: Int, generator: inout SeededGenerator) {
            output.append(UInt8(ascii: "{"))
            let count = Int.random(in: 0...(depth > 3 ? 3 : 6), using: &generator)
            var keys: [String] = []
            for index in 0..<count {
                if index > 0 { output += Array((style == .compact ? "," : ", ").utf8) }
                if style == .pretty { newline(depth + 1) }
                var key = ["aps", "alert", "a", "b", "title", "k\u{e9}y", "x y"].randomElement(using: &generator)!
                if repeatsKeys, let earlier = keys.randomElement(using: &generator), Bool.random(using: &generator) { key = earlier }
                if keys.contains(key) { madeUnplain = true }
                keys.append(key)
                writeString(key, generator: &generator, isKey: true)
                output += Array((style == .compact ? ":" : ": ").utf8)
                value(depth: depth + 1, generator: &generator)
            }
            if style == .pretty, count > 0 { newline(depth) }
            output.append(UInt8(ascii: "}"))
        }

        private mutating func array(depth: Int, generator: inout SeededGenerator) {
            output.append(UInt8(ascii: "["))
            let count = Int.random(in: 0...4, using: &generator)
            for index in 0..<count {
                if index > 0 { output += Array((style == .compact ? "," : ", ").utf8) }
                if style == .pretty { newline(depth + 1) }
                value(depth: depth + 1, generator: &generator)
            }
            if style == .pretty, count > 0 { newline(depth) }
            output.append(UInt8(ascii: "]"))
        }

        private mutating func string(generator: inout SeededGenerator, isKey: Bool) {
            let pieces = ["Ann", "é", "😀", "𝄞", "\"", "\\", "/", "\n", "\t", "\u{8}", "\u{1}", "\u{1f}", "\u{7f}", "\u{2028}", " ", "x"]
            var text = ""
            for _ in 0..<Int.random(in: 0...6, using: &generator) { text += pieces.randomElement(using: &generator)! }
            writeString(text, generator: &generator, isKey: isKey)
        }

        /// Writes `text` quoted, each character escaped one of the ways JSON allows.
        private mutating func writeString(_ text: String, generator: inout SeededGenerator, isKey: Bool) {
            output.append(UInt8(ascii: "\""))
            for scalar in text.unicodeScalars {
                let escapes = !isKey || escapesKeys
                switch scalar {
                case "\"": output += Array((escapes && Bool.random(using: &generator) ? #"\u0022"# : #"\""#).utf8)
                case "\\": output += Array((escapes && Bool.random(using: &generator) ? #"\u005C"# : #"\\"#).utf8)
                case "\n": output += Array((Bool.random(using: &generator) ? #"\u000a"# : #"\n"#).utf8)
                case "\t": output += Array(#"\t"#.utf8)
                case "\u{8}": output += Array(#"\b"#.utf8)
                case _ where scalar.value < 0x20: output += Self.unicodeEscape(scalar.value, upper: Bool.random(using: &generator))
                case "/" where escapes && Bool.random(using: &generator): output += Array(#"\/"#.utf8)
                case _ where escapes && Int.random(in: 0..<4, using: &generator) == 0:
                    if scalar.value > 0xFFFF {
                        let value = scalar.value - 0x10000
                        output += Self.unicodeEscape(0xD800 + (value >> 10), upper: false) + Self.unicodeEscape(0xDC00 + (value & 0x3FF), upper: true)
                    } else {
                        output += Self.unicodeEscape(scalar.value, upper: Bool.random(using: &generator))
                    }
                default: output += Array(String(scalar).utf8)
                }
            }
            if isKey, escapesKeys { madeUnplain = true }
            output.append(UInt8(ascii: "\""))
        }

        /// `\u` and four hexadecimal digits, in lower or upper case.
        private static func unicodeEscape(_ unit: UInt32, upper: Bool) -> [UInt8] {
            let digits = Array((upper ? "0123456789ABCDEF" : "0123456789abcdef").utf8)
            return Array(#"\u"#.utf8) + [12, 8, 4, 0].map { digits[Int(unit >> UInt32($0) & 0xF)] }
        }
    }
}
