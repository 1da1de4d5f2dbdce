import Records
import JSON
@testable import Notifications
import Testing
import TestSupport

/// The byte view of a payload (`Payload(viewing:)`) against the tree (`Payload(validating:)`): where
/// the view accepts, the tree must accept the same payload with the same facts and the same compact
/// bytes; where the tree refuses, the view must too.
@Suite("Payload view")
struct PayloadViewTests {
    /// The tree's verdict: the payload, or nil when it is invalid.
    private func tree(_ text: String) -> Payload? {
        guard let json = try? JSONValue(parsing: Array(text.utf8)) else { return nil }
        return try? Payload(validating: json)
    }

    /// Checks that the view and the tree agree on `text`; returns whether the view accepted it.
    @discardableResult
    private func expectAgreement(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let viewed = Payload(viewing: RecordBytes(text))
        let parsed = tree(text)
        guard let viewed else { return false }
        guard let parsed else {
            Issue.record("the view accepts what the tree refuses: \(text)", sourceLocation: sourceLocation)
            return true
        }
        #expect(viewed.serialized() == JSONValue.object(parsed.json).serialized(), "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.json == parsed.json, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed == parsed, sourceLocation: sourceLocation)
        #expect(viewed.hasAlertText == parsed.hasAlertText, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.isSilent == parsed.isSilent, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.isSoundOnly == parsed.isSoundOnly, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.isBadgeOnly == parsed.isBadgeOnly, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.contentAvailable == parsed.contentAvailable, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.mutableContent == parsed.mutableContent, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.category == parsed.category, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.hidesViewButton == parsed.hidesViewButton, "\(text)", sourceLocation: sourceLocation)
        for profile in [Profile.modern, .legacy] {
            #expect(viewed.badgeEffect(profile: profile) == parsed.badgeEffect(profile: profile), sourceLocation: sourceLocation)
        }
        #expect(RequestValidator.inferredPushType(viewed.traits) == RequestValidator.inferredPushType(parsed.traits), sourceLocation: sourceLocation)
        #expect(viewed.interruptionLevel == parsed.interruptionLevel, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.contentChanged == parsed.contentChanged, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.hasBadge == parsed.hasBadge, "\(text)", sourceLocation: sourceLocation)
        #expect(viewed.hasSound == parsed.hasSound, "\(text)", sourceLocation: sourceLocation)
        return true
    }

    /// `aps` members of every documented key, of the right type and of wrong ones.
    static let apsMembers: [String] = [
        #""alert":"Hello""#, #""alert":"""#, #""alert":"\u00e9\n""#, #""alert":{"title":"T","body":"B"}"#,
        #""alert":{"title":""}"#, #""alert":{"loc-key":"K","loc-args":["a","\"b\""]}"#, #""alert":{"loc-args":[1]}"#,
        #""alert":{"title-loc-args":[],"show-view":false}"#, #""alert":{"show-view":true,"action-loc-key":null}"#,
        #""alert":{"action-loc-key":"VIEW","launch-image":"x.png"}"#, #""alert":{"show-view":"no"}"#,
        #""alert":{"subtitle":"S","x":{"y":[1,2]}}"#, #""alert":42"#, #""alert":null"#,
        #""badge":0"#, #""badge":-0"#, #""badge":7"#, #""badge":1.0"#, #""badge":"1""#, #""badge":123456789012345678901234567890"#,
        #""sound":"default""#, #""sound":{"critical":1,"name":"a.caf","volume":0.5}"#, #""sound":{"volume":1.5}"#,
        #""sound":{"volume":1e0}"#, #""sound":{"critical":1.5}"#, #""sound":3"#,
        #""content-available":1"#, #""content-available":0"#, #""content-available":"1""#, #""content-available":1e0"#,
        #""mutable-content":1"#, #""mutable-content":2"#, #""mutable-content":true"#,
        #""category":"NEWS""#, #""category":"N\u00c9WS""#, #""category":5"#,
        #""thread-id":"t""#, #""thread-id":[]"#, #""target-content-id":"c""#, #""filter-criteria":"f""#, #""filter-criteria":null"#,
        #""interruption-level":"time-sensitive""#, #""interruption-level":"loud""#, #""interruption-level":"\u0070assive""#,
        #""relevance-score":0.25"#, #""relevance-score":"high""#,
        #""content-state":{"score":[1,2],"big":1E400}"#, #""stale-date":1700000000"#, #""event":"update""#, #""x-unknown":{"a":null}"#,
        #""event":"begin""#, #""event":1"#, #""timestamp":1.5"#, #""timestamp":1700000000"#, #""stale-date":"soon""#,
        #""dismissal-date":1700000000"#, #""dismissal-date":1e9"#, #""input-push-token":1"#, #""input-push-token":true"#,
        #""content-state":[]"#, #""attributes":{"a":1}"#, #""attributes":"x""#, #""attributes-type":"T""#, #""attributes-type":{}"#,
        #""input-push-channel":"c""#, #""input-push-channel":1"#, #""content-changed":true"#, #""content-changed":false"#,
        #""content-changed":1"#, #""alert":{"title":{"loc-key":"K"}}"#,
    ]

    @Test("every documented aps key, right and wrong types, alone and in pairs, with custom data")
    func apsKeys() {
        var accepted = 0
        let custom = #","data":{"n":-12.50e+3,"s":"a\/b","u":"😀 \ud83d\ude00","list":[true,false,null,{}],"e":"\u001f\u001F\b"}"#
        for first in Self.apsMembers {
            for second in [""] + Self.apsMembers.prefix(12).map({ "," + $0 }) {
                let text = #"{"aps":{"# + first + second + "}" + custom + "}"
                if expectAgreement(text) { accepted += 1 }
                // Also without custom data, and spread with whitespace.
                expectAgreement(#"{"aps":{"# + first + second + "}}")
                expectAgreement(" {\n\t\"aps\" : {" + first + second + "} }\r\n")
            }
        }
        #expect(accepted > Self.apsMembers.count * 5)
    }

    /// The view decides most volumes from their text; the tree reads a `Double`. Every form the
    /// text path decides, and those it hands to `Double`, must agree with the tree.
    @Test("a sound's volume, every form of number, read as the tree reads it", arguments: [
        "0", "-0", "-0.0", "0.0", "0.5", "0.99999999999999999", "1", "1.0", "1.000", "1.0000000000000000001",
        "1.01", "1.5", "10", "100", "2", "9.9", "0e5", "0.1E1", "1e0", "10e-1", "100e-2", "1e-400", "-1", "-0.5",
        "-1e-400", "1E400", "0.0000000000000000000000001",
    ])
    func volume(number: String) {
        let level = Double(number) ?? .nan
        let isVolume = Array(number.utf8).withUnsafeBufferPointer(APS.isVolume)
        #expect(isVolume == (level >= 0 && level <= 1), "\(number)")
        expectAgreement(#"{"aps":{"alert":"a","sound":{"name":"s","volume":"# + number + "}}}")
    }

    @Test("payloads that are invalid, or unusual in a way the view leaves to the tree", arguments: [
        "", " ", "[]", "null", #"{"aps":[]}"#, #"{"no":{}}"#, #"{"aps":{}} x"#, #"{"aps":{},}"#, #"{"aps":{"a":01}}"#,
        #"{"aps":{"a":"\ud800"}}"#, #"{"aps":{"a":"\x"}}"#, "{\"aps\":{\"a\":\"\u{1}\"}}", #"{"aps":{},"aps":{"badge":1}}"#,
        #"{"aps":{"badge":"x","badge":1}}"#, #"{"\u0061ps":{}}"#, #"{"aps":{"a":tru}}"#, #"{"aps":{"a":[1,]}}"#,
        #"{"aps":{"a":{"b":1,"b":2}}}"#, #"{"aps":{}"#, #"{"aps":{"a":"unterminated}}"#,
    ])
    func unusual(text: String) {
        let viewed = Payload(viewing: RecordBytes(text))
        #expect(viewed == nil)
        // The tree still decides (a repeated key is valid, the last value winning).
        if text.contains("\"badge\":\"x\",\"badge\":1") { #expect(tree(text)?.isBadgeOnly == true) }
    }

    @Test("strings with a stop at every position up to 40 bytes, as values and keys: the view agrees with the tree")
    func stopAtEveryPosition() {
        // An escape, multi-byte UTF-8, DEL (plain), a control character, invalid UTF-8: the scan steps
        // sixteen bytes, then eight, then one, and none may step over a byte it must look at.
        let stops = [#"\n"#, #"\""#, #"\u00e9"#, "é", "😀", "\u{7F}", "\u{1F}", "\u{0}"]
        for length in 0...40 {
            for position in 0...length {
                for stop in stops {
                    let string = String(repeating: "a", count: position) + stop + String(repeating: "b", count: length - position)
                    expectAgreement(#"{"aps":{"alert":""# + string + #"","sound":"default"},"k":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#)
                    expectAgreement(#"{"aps":{"badge":1},""# + string + #"":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#)
                }
                // Invalid UTF-8 (a lone continuation byte): both refuse.
                var bytes = Array(#"{"aps":{"alert":""#.utf8) + [UInt8](repeating: 0x61, count: position) + [0x80]
                bytes += [UInt8](repeating: 0x62, count: length - position) + Array(#""},"k":"xxxxxxxxxxxxxxxxxxxxxxxx"}"#.utf8)
                #expect(Payload(viewing: RecordBytes(bytes)) == nil)
                #expect((try? JSONValue(parsing: bytes)) == nil)
            }
        }
    }

    @Test("nesting: the view refuses beyond the limit, as the tree does")
    func depth() {
        let deep = #"{"aps":{},"d":"# + String(repeating: "[", count: 510) + String(repeating: "]", count: 510) + "}"
        #expect(expectAgreement(deep))
        let tooDeep = #"{"aps":{},"d":"# + String(repeating: "[", count: 512) + String(repeating: "]", count: 512) + "}"
        #expect(Payload(viewing: RecordBytes(tooDeep)) == nil)
        #expect(tree(tooDeep) == nil)
    }

    @Test("generated documents: the view agrees with the tree, and the compact form is copied as it is", arguments: [UInt64(7), 8, 9])
    func generated(seed: UInt64) throws {
        var generator = JSONTextGenerator(random: SeededGenerator(seed: seed))
        var accepted = 0
        for _ in 0..<800 {
            let (_, customText) = generator.value(depth: 4)
            let (_, apsText) = generator.value(depth: 2)
            let text = #"{"aps":{"badge":1,"x":"# + apsText + #"},"data":"# + customText + "}"
            if expectAgreement(text) { accepted += 1 }
            // The tree's own compact form is always accepted, and copied unchanged.
            let compact = try #require(tree(text)).serialized()
            if let viewed = Payload(viewing: RecordBytes(compact)) {
                #expect(viewed.storage.compactBytes == RecordBytes(compact))
            } else {
                // Only escaped keys (control characters, quotes) are left to the tree.
                #expect(compact.contains(UInt8(ascii: "\\")))
            }
        }
        #expect(accepted > 100)
    }
}
