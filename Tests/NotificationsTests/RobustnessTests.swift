import JSON
import Notifications
import Records
import TestSupport
import Testing

@Suite("Robustness")
struct RobustnessTests {
    static let seeds: [String] = [
        #"{"aps":{"alert":{"title":"Game","body":"Score \u00e9 1-0","loc-args":["a"]},"badge":3,"sound":{"critical":1,"name":"s","volume":0.5}},"match":{"id":12345678901234567890,"p":[1.5e3,-2,null,true]}}"#,
        #"{"aps":{"content-available":1,"thread-id":"t","interruption-level":"passive","relevance-score":0.2},"k":"\ud83d\ude00"}"#,
        #"{"aps":{"event":"update","timestamp":1700000000,"content-state":{"s":[1,{"x":"y"}]},"mutable-content":1,"category":"C"}}"#,
    ]

    /// Whether a record ended well: an accepted payload round-trips; a rejection has a detail and its reason's status.
    static func endedWell(_ result: Result<NotificationRequest, Rejection>) -> Bool {
        switch result {
        case .success(let request):
            guard let again = try? JSONValue(parsing: request.payload.serialized()) else { return false }
            return again == .object(request.payload.json)
        case .failure(let rejection):
            return !rejection.detail.isEmpty && rejection.status == rejection.reason.status
        }
    }

    @Test("100,000 generated and mutated records end as a request or a rejection")
    func fuzz() async {
        var random = SeededGenerator(seed: 0xF00D)
        let validators = [RequestValidator(), RequestValidator(profile: .legacy, allowedBundleIDs: ["com.example.app"])]
        let key = Array(TestRecord.mixedCaseToken.utf8)
        let headerSets: [[RecordHeader]] = [
            [RecordHeader(name: "apns-topic", value: "com.example.app")],
            [RecordHeader(name: "apns-topic", value: "com.example.app"), RecordHeader(name: "apns-push-type", value: "background"), RecordHeader(name: "apns-priority", value: "5")],
            [RecordHeader(name: "APNS-TOPIC", value: "com.example.app.voip"), RecordHeader(name: "apns-push-type", value: "voip")],
            [RecordHeader(name: "apns-topic", value: [0xFF, 0xFE]), RecordHeader(name: "apns-id", value: [0x00])],
        ]
        let wrongValues = ["1", "\"s\"", "[]", "{}", "null", "true", "1.5", "-0", "[[[[", "\"\\ud800\""]
        var outcomes = (accepted: 0, rejected: 0)
        var failures: [String] = []
        for iteration in 0..<100_000 {
            // Seconds of work on one of the few threads of Swift's pool, which every other suite's
            // jobs share: they get their turn (docs/testing.md, "A test's deadline is not a timing test").
            if iteration % 1_000 == 0 { await Task.yield() }
            let seed = Array(Self.seeds[iteration % Self.seeds.count].utf8)
            var bytes: [UInt8]
            switch iteration % 6 {
            case 0:
                bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            case 1:
                bytes = Array(seed.prefix(Int.random(in: 0...seed.count, using: &random)))
            case 2:
                bytes = seed
                for _ in 0..<Int.random(in: 1...4, using: &random) {
                    bytes[Int.random(in: 0..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 3:
                bytes = seed
                let alphabet = Array(#"{}[]",:\0123456789eE.-+tfnu"#.utf8)
                bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: Int.random(in: 0...bytes.count, using: &random))
            case 4:
                // A known key given a value of another type.
                let keys = ["alert", "badge", "sound", "content-available", "mutable-content", "category", "thread-id", "interruption-level", "relevance-score", "title", "volume", "loc-args", "critical"]
                let key = keys.randomElement(using: &random) ?? "alert"
                let value = wrongValues.randomElement(using: &random) ?? "1"
                bytes = Array(#"{"aps":{"alert":{"title":"t","loc-args":[]},"sound":{"volume":1},"\#(key)":\#(value)}}"#.utf8)
            default:
                let depth = [100, 511, 512, 513, 10_000][iteration % 5]
                bytes = Array(#"{"aps":{},"d":"#.utf8) + [UInt8](repeating: UInt8(ascii: "["), count: depth) + [UInt8](repeating: UInt8(ascii: "]"), count: depth) + [UInt8(ascii: "}")]
            }
            let record = RequestRecord(key: iteration % 97 == 0 ? Array(bytes.prefix(80)) : key, headers: headerSets[iteration % headerSets.count], value: bytes,
                                       source: TopicPartitionOffset(topic: "t", partition: 0, offset: Int64(iteration)))
            let validator = validators[iteration % validators.count]
            let result = validator.validate(record)
            if Self.endedWell(result) {
                if case .success = result { outcomes.accepted += 1 } else { outcomes.rejected += 1 }
            } else if failures.count < 5 {
                failures.append(String(decoding: bytes.prefix(200), as: UTF8.self))
            }
        }
        #expect(failures.isEmpty, "\(failures)")
        #expect(outcomes.accepted + outcomes.rejected == 100_000)
        #expect(outcomes.accepted > 1_000)
        #expect(outcomes.rejected > 10_000)
    }

    @Test("the parser alone survives random bytes and deep mixed nesting")
    func parserFuzz() async {
        var random = SeededGenerator(seed: 7)
        let alphabet = Array(#"{}[]",:\ 0123456789eE.-+truefalsnl"#.utf8) + [0xC3, 0xA9, 0xFF, 0xED, 0xA0]
        var parsed = 0
        for iteration in 0..<50_000 {
            // As in `fuzz()`: other suites' jobs get their turn on the pool.
            if iteration % 1_000 == 0 { await Task.yield() }
            let count = Int.random(in: 0...40, using: &random)
            let bytes = (0..<count).map { _ in alphabet.randomElement(using: &random) ?? 0 }
            if let value = try? JSONValue(parsing: bytes) {
                parsed += 1
                #expect((try? JSONValue(parsing: value.serialized())) == value)
            }
        }
        #expect(parsed > 0)
        let mixed = Array(String(repeating: #"{"a":[{"b":"#, count: 3_000).utf8)
        #expect(throws: JSONParseError.self) { try JSONValue(parsing: mixed) }
    }
}
