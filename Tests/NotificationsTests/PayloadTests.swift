import JSON
import Notifications
import Testing
import TestSupport

@Suite("Payload rules of SEMANTICS.md section 2")
struct PayloadTests {
    /// A key path, a value of the right type and a value of the wrong type, plus text the message must contain.
    static let typeRules: [(path: String, good: String, bad: String, mentions: String)] = [
        ("alert", #""Hi""#, "1", "aps.alert"),
        ("alert", #"{"title":"T"}"#, "[]", "aps.alert"),
        ("badge", "0", "1.0", "aps.badge"),
        ("badge", "-3", #""3""#, "aps.badge"),
        ("badge", "12345678901234567890", "1e2", "aps.badge"),
        ("sound", #""default""#, "true", "aps.sound"),
        ("sound", #"{"critical":1,"name":"s.aiff","volume":0.5}"#, #"{"critical":"1"}"#, "aps.sound.critical"),
        ("sound", #"{"name":"s.aiff"}"#, #"{"name":1}"#, "aps.sound.name"),
        ("sound", #"{"volume":1}"#, #"{"volume":1.5}"#, "aps.sound.volume"),
        ("sound", #"{"volume":0}"#, #"{"volume":-0.1}"#, "aps.sound.volume"),
        ("sound", #"{"volume":1e0}"#, #"{"volume":"loud"}"#, "aps.sound.volume"),
        ("content-available", "1", "true", "aps.content-available"),
        ("content-available", "0", "1.0", "aps.content-available"),
        ("mutable-content", "1", #""1""#, "aps.mutable-content"),
        ("category", #""MSG""#, "1", "aps.category"),
        ("thread-id", #""t""#, "null", "aps.thread-id"),
        ("target-content-id", #""w""#, "{}", "aps.target-content-id"),
        ("filter-criteria", #""work""#, #"["work"]"#, "aps.filter-criteria"),
        ("interruption-level", #""time-sensitive""#, #""urgent""#, "aps.interruption-level"),
        ("interruption-level", #""passive""#, "1", "aps.interruption-level"),
        ("relevance-score", "0.75", #""high""#, "aps.relevance-score"),
        ("relevance-score", "1", "null", "aps.relevance-score"),
        ("event", #""start""#, #""begin""#, "aps.event"),
        ("event", #""end""#, "1", "aps.event"),
        ("timestamp", "1700000000", "1.5", "aps.timestamp"),
        ("stale-date", "1700000000", #""soon""#, "aps.stale-date"),
        ("dismissal-date", "0", "1e9", "aps.dismissal-date"),
        ("input-push-token", "1", "true", "aps.input-push-token"),
        ("content-state", #"{"a":1}"#, "[]", "aps.content-state"),
        ("attributes", "{}", #""x""#, "aps.attributes"),
        ("attributes-type", #""T""#, "{}", "aps.attributes-type"),
        ("input-push-channel", #""c""#, "1", "aps.input-push-channel"),
        ("content-changed", "true", "1", "aps.content-changed"),
    ]

    @Test("known aps keys must have their documented type", arguments: typeRules)
    func typeRule(_ rule: (path: String, good: String, bad: String, mentions: String)) throws {
        let good = try JSONValue(parsing: Array(#"{"aps":{"\#(rule.path)":\#(rule.good)}}"#.utf8))
        #expect(throws: Never.self) { try Payload(validating: good) }
        let badText = #"{"aps":{"\#(rule.path)":\#(rule.bad)}}"#
        let bad = try JSONValue(parsing: Array(badText.utf8))
        let error = try #require(throws: PayloadError.self) { try Payload(validating: bad) }
        #expect(error.keyPath == rule.mentions)
        #expect(error.message.contains(rule.mentions))
        // Through the validator: InvalidPayload, 400, the same sentence.
        let rejection = try #require(TestRecord.forValidator().payload(badText).rejection())
        #expect(rejection.reason == .invalidPayload)
        #expect(rejection.status == 400)
        #expect(rejection.detail.contains(rule.mentions))
    }

    @Test("mdm: the payload needs mdm, a non-empty string; aps is optional and typed when present")
    func mdm() throws {
        func validate(_ text: String) throws -> Payload {
            try Payload(validating: try JSONValue(parsing: Array(text.utf8)), pushType: .mdm)
        }
        #expect(try validate(#"{"mdm":"magic"}"#).hasAlertText == false)
        #expect(try validate(#"{"mdm":"magic","aps":{"alert":"x"}}"#).hasAlertText)
        for bad in [#"{"mdm":""}"#, #"{"mdm":1}"#, #"{"aps":{}}"#, #"{"mdm":"m","aps":{"badge":"1"}}"#, #"{"mdm":"m","aps":1}"#] {
            #expect(throws: PayloadError.self, "\(bad)") { try validate(bad) }
        }
        // Without the header, an mdm payload is an ordinary one: no aps, InvalidPayload.
        #expect(TestRecord.forValidator().payload(#"{"mdm":"magic"}"#).rejection()?.reason == .invalidPayload)
    }

    @Test("liveactivity in modern: title, subtitle and body may be loc objects, which count as alert text when loc-key is non-empty")
    func locObjects() throws {
        func validate(_ alert: String, _ pushType: PushType? = .liveactivity, _ profile: Profile = .modern) throws -> Payload {
            try Payload(validating: try JSONValue(parsing: Array(#"{"aps":{"alert":\#(alert)}}"#.utf8)), pushType: pushType, profile: profile)
        }
        #expect(try validate(#"{"title":{"loc-key":"K","loc-args":["a"],"x":1}}"#).hasAlertText)
        #expect(try validate(#"{"body":{"loc-key":""}}"#).hasAlertText == false)
        #expect(try validate(#"{"subtitle":{"loc-key":"S"},"body":"b"}"#).hasAlertText)
        for bad in [#"{"title":{"loc-args":["a"]}}"#, #"{"title":{"loc-key":1}}"#, #"{"title":{"loc-key":"K","loc-args":[1]}}"#, #"{"title":[]}"#] {
            #expect(throws: PayloadError.self, "\(bad)") { try validate(bad) }
        }
        #expect(throws: PayloadError.self) { try validate(#"{"title":{"loc-key":"K"}}"#, .alert) }
        #expect(throws: PayloadError.self) { try validate(#"{"title":{"loc-key":"K"}}"#, .liveactivity, .legacy) }
        #expect(throws: PayloadError.self) { try validate(#"{"title":{"loc-key":"K"}}"#, nil) }
    }

    static let alertKeys: [(key: String, good: String, bad: String)] = [
        ("title", #""t""#, "1"), ("subtitle", #""s""#, "[]"), ("body", #""b""#, "{}"), ("launch-image", #""l.png""#, "true"),
        ("title-loc-key", #""K""#, "null"), ("subtitle-loc-key", #""K""#, "2"), ("loc-key", #""K""#, "false"),
        ("title-loc-args", #"["a","b"]"#, #"["a",1]"#), ("subtitle-loc-args", "[]", #""a""#), ("loc-args", #"["x"]"#, #"[["x"]]"#),
        ("show-view", "false", "0"), ("action-loc-key", "null", "1"), ("action-loc-key", #""VIEW""#, "[]"),
    ]

    @Test("alert object keys must have their documented type", arguments: alertKeys)
    func alertKey(_ rule: (key: String, good: String, bad: String)) throws {
        let good = try JSONValue(parsing: Array(#"{"aps":{"alert":{"\#(rule.key)":\#(rule.good)}}}"#.utf8))
        #expect(throws: Never.self) { try Payload(validating: good) }
        let bad = try JSONValue(parsing: Array(#"{"aps":{"alert":{"\#(rule.key)":\#(rule.bad)}}}"#.utf8))
        let error = try #require(throws: PayloadError.self) { try Payload(validating: bad) }
        #expect(error.keyPath == "aps.alert." + rule.key)
        #expect(error.message.contains("aps.alert." + rule.key))
    }

    @Test("every documented key is typed; unknown keys are kept")
    func typedView() throws {
        let text = #"""
        {"aps":{"alert":{"title":"T","subtitle":"S","body":"B","launch-image":"L","title-loc-key":"TK","title-loc-args":["1"],
        "subtitle-loc-key":"SK","subtitle-loc-args":["2"],"loc-key":"LK","loc-args":["3"],"show-view":true,"action-loc-key":null,"extra":1},
        "badge":5,"sound":{"critical":1,"name":"n","volume":0.25,"x":2},"content-available":1,"mutable-content":1,"category":"C",
        "thread-id":"th","target-content-id":"tc","interruption-level":"critical","relevance-score":0.5,"filter-criteria":"f",
        "stale-date":1700000100,"content-state":{"score":"1-0"},"timestamp":1700000000,"event":"update","dismissal-date":1700000200,
        "attributes-type":"Match","attributes":{"home":"A"},"future-key":[1,2]},"custom":{"n":null}}
        """#
        let payload = try Payload(validating: JSONValue(parsing: Array(text.utf8)))
        let aps = payload.aps
        guard case .fields(let alert) = aps.alert else {
            Issue.record("alert should be an object")
            return
        }
        #expect(alert.title == "T" && alert.subtitle == "S" && alert.body == "B" && alert.launchImage == "L")
        #expect(alert.titleLocKey == "TK" && alert.titleLocArgs == ["1"] && alert.subtitleLocKey == "SK" && alert.subtitleLocArgs == ["2"])
        #expect(alert.locKey == "LK" && alert.locArgs == ["3"] && alert.showView == true && alert.actionLocKey == ActionLocKey.none)
        #expect(alert.otherKeys["extra"] == 1)
        #expect(aps.badge?.intValue == 5)
        guard case .critical(let sound) = aps.sound else {
            Issue.record("sound should be an object")
            return
        }
        #expect(sound.critical?.intValue == 1 && sound.name == "n" && sound.volume?.text == "0.25" && sound.otherKeys["x"] == 2)
        #expect(payload.contentAvailable && payload.mutableContent && payload.category == "C")
        #expect(aps.threadID == "th" && aps.targetContentID == "tc" && aps.interruptionLevel == .critical)
        #expect(aps.relevanceScore?.text == "0.5" && aps.filterCriteria == "f")
        #expect(aps.staleDate?.intValue == 1_700_000_100 && aps.timestamp?.intValue == 1_700_000_000 && aps.dismissalDate?.intValue == 1_700_000_200)
        #expect(aps.contentState?["score"] == "1-0" && aps.event == "update" && aps.attributesType == "Match" && aps.attributes?["home"] == "A")
        #expect(aps.otherKeys.keys == ["future-key"])
        #expect(payload.json["custom"] == ["n": nil])
    }

    static let classifications: [(aps: String, alertText: Bool, silent: Bool, soundOnly: Bool, badgeOnly: Bool)] = [
        (#"{"alert":"Hi"}"#, true, false, false, false),
        (#"{"alert":""}"#, false, false, false, false),
        (#"{"alert":{"title":""}}"#, false, false, false, false),
        (#"{"alert":{"launch-image":"x","loc-args":["a"]}}"#, false, false, false, false),
        (#"{"alert":{"subtitle":"s"}}"#, true, false, false, false),
        (#"{"alert":{"title-loc-key":"K"}}"#, true, false, false, false),
        (#"{"alert":{"subtitle-loc-key":"K"}}"#, true, false, false, false),
        (#"{"alert":{"loc-key":"K"}}"#, true, false, false, false),
        (#"{"alert":{"body":"b"},"content-available":1}"#, true, false, false, false),
        (#"{"content-available":1}"#, false, true, false, false),
        (#"{"content-available":1,"alert":""}"#, false, true, false, false),
        (#"{"content-available":0}"#, false, false, false, false),
        (#"{"content-available":1,"badge":1}"#, false, false, false, true),
        (#"{"content-available":1,"sound":"default"}"#, false, false, true, false),
        (#"{"sound":"default"}"#, false, false, true, false),
        (#"{"badge":0}"#, false, false, false, true),
        (#"{"badge":2,"sound":"a"}"#, false, false, false, false),
        (#"{"alert":"a","badge":2}"#, true, false, false, false),
    ]

    @Test("alert text, silent, sound-only, badge-only", arguments: classifications)
    func classification(_ row: (aps: String, alertText: Bool, silent: Bool, soundOnly: Bool, badgeOnly: Bool)) throws {
        let payload = try Payload(validating: JSONValue(parsing: Array(#"{"aps":\#(row.aps)}"#.utf8)))
        #expect(payload.hasAlertText == row.alertText)
        #expect(payload.isSilent == row.silent)
        #expect(payload.isSoundOnly == row.soundOnly)
        #expect(payload.isBadgeOnly == row.badgeOnly)
    }

    static let badges: [(aps: String, profile: Profile, effect: BadgeEffect)] = [
        (#"{"badge":3}"#, .modern, .set), (#"{"badge":0}"#, .modern, .clear), (#"{"badge":-0}"#, .modern, .clear),
        (#"{"alert":"a"}"#, .modern, .unchanged), (#"{"badge":3}"#, .legacy, .set), (#"{"badge":0}"#, .legacy, .clear),
        (#"{"alert":"a"}"#, .legacy, .clear), (#"{"badge":99999999999999999999}"#, .modern, .set),
    ]

    @Test("badge effect per profile", arguments: badges)
    func badgeEffect(_ row: (aps: String, profile: Profile, effect: BadgeEffect)) throws {
        let payload = try Payload(validating: JSONValue(parsing: Array(#"{"aps":\#(row.aps)}"#.utf8)))
        #expect(payload.badgeEffect(profile: row.profile) == row.effect)
    }

    @Test("custom keys and numbers are delivered exactly")
    func exactCustomKeys() throws {
        let text = #"{"z":1.50,"aps":{"badge":1,"unknown":{"deep":[1e400,-0,null,true]}},"a":{"b":[{},[]],"c":"\u0000é\ud83d\ude00/"}}"#
        let payload = try Payload(validating: JSONValue(parsing: Array(text.utf8)))
        #expect(String(decoding: payload.serialized(), as: UTF8.self) == #"{"z":1.50,"aps":{"badge":1,"unknown":{"deep":[1e400,-0,null,true]}},"a":{"b":[{},[]],"c":"\u0000é😀/"}}"#)
        #expect(payload.json.keys == ["z", "aps", "a"])
    }

    @Test("payloads compare as JSON")
    func equality() throws {
        let a = try Payload(validating: JSONValue(parsing: Array(#"{"aps":{"badge":1},"n":1.0,"k":{"x":1,"y":2}}"#.utf8)))
        let b = try Payload(validating: JSONValue(parsing: Array(#"{"k":{"y":2,"x":1e0},"n":1,"aps":{"badge":1}}"#.utf8)))
        let c = try Payload(validating: JSONValue(parsing: Array(#"{"k":{"y":2,"x":1},"n":1.01,"aps":{"badge":1}}"#.utf8)))
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
    }

    @Test("the body must be an object with an aps object")
    func bodyShape() {
        for text in ["1", "null", #""aps""#, "[]", #"{"aps":[]}"#, #"{"aps":null}"#, #"{"APS":{}}"#] {
            #expect(throws: PayloadError.self, "\(text)") { try Payload(validating: JSONValue(parsing: Array(text.utf8))) }
        }
    }
}
