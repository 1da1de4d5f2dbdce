import DispatcherTools
import Foundation
import Records

/// The inputs the corpus started from (`--write-seeds`): every sample of `Config/samples` as JSON
/// lines (each file whole) and, for each request line, its record in the framing; then records
/// written here for what the samples do not show and the tests do (RobustnessTests,
/// PayloadViewTests, JSONParserTests): nesting at the limit, repeated and escaped keys, wide
/// objects, escapes, numbers beyond a Double, the encodings and leniencies Foundation has, and each
/// dispatcher variation.
enum SeedInputs {
    /// Writes the seeds into `output` (created if need be); how many.
    static func write(samples: URL, to output: URL) throws -> Int {
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        var seeds: [(name: String, bytes: [UInt8])] = []
        let files = try FileManager.default.contentsOfDirectory(at: samples, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "jsonl" }.sorted { $0.path < $1.path }
        for file in files {
            let name = file.deletingPathExtension().lastPathComponent
            let text = [UInt8](try Data(contentsOf: file))
            let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            seeds.append(("lines-\(name)", Array(lines.prefix(FuzzInput.maximumLines).joined(separator: [UInt8(ascii: "\n")]))))
            for (index, line) in lines.enumerated() {
                guard let (topic, record) = try? JSONLines.decode(line, source: FuzzInput.source), topic == nil else { continue }
                seeds.append(("record-\(name)-\(index)", FuzzInput.encode(record)))
                // The same record under another dispatcher: legacy, ledger and limits, no apps.
                if index % 4 != 0 { seeds.append(("record-\(name)-\(index)-\(index % 4)", FuzzInput.encode(record, options: UInt8(ascii: "0") + UInt8(index % 4)))) }
            }
        }
        seeds += handmade
        for seed in seeds {
            try Data(seed.bytes).write(to: output.appendingPathComponent(seed.name))
        }
        return seeds.count
    }

    /// A valid device token.
    static let token = String(repeating: "0a", count: 32)

    /// Records of the framing for what the samples do not show.
    static var handmade: [(name: String, bytes: [UInt8])] {
        func framed(_ headers: [String], _ value: String, options: Character = "0", key: String = token) -> [UInt8] {
            Array("\(options)\(key)\n\(headers.map { $0 + "\n" }.joined())\n\(value)".utf8)
        }
        let topic = "apns-topic:com.example.news"
        func nested(_ depth: Int) -> String {
            #"{"aps":{"alert":"deep"},"d":"# + String(repeating: "[", count: depth - 1) + String(repeating: "]", count: depth - 1) + "}"
        }
        let wide = (0..<33).map { #""k\#($0)":\#($0)"# }.joined(separator: ",")
        var seeds: [(String, [UInt8])] = [
            ("depth-511", framed([topic], nested(511))),
            ("depth-512", framed([topic], nested(512))),
            ("depth-513", framed([topic], nested(513))),
            ("repeated-key", framed([topic], #"{"aps":{"alert":"first"},"aps":{"alert":"second","badge":2}}"#)),
            ("repeated-aps-key", framed([topic], #"{"aps":{"badge":1,"badge":2,"alert":"a"}}"#)),
            ("escaped-key", framed([topic], #"{"a\u0070s":{"alert":"x"},"\u00e9":1}"#)),
            ("wide-object", framed([topic], #"{"aps":{"alert":"x"},"#) + Array("\(wide)}".utf8)),
            ("pretty", framed([topic], "{\r\n\t\"aps\" : {\n    \"alert\" : { \"title\" : \"T\", \"body\" : \"B\" },\n    \"sound\" : \"default\"\n  } ,\n  \"x\" : [ 1 , 2.5e-3 , true , null ]\n}\n")),
            ("escapes", framed([topic], #"{"aps":{"alert":"\u00e9\/\ud83d\ude00\u001F\n\"\\\u00E9"},"c":"é\u2028"}"#)),
            ("numbers", framed([topic], #"{"aps":{"alert":"n","badge":12345678901234567890},"n":[1e400,-0.0e-0,1E+2,-12345678901234567890123,0.1e-400]}"#)),
            ("trailing-comma", framed([topic], #"{"aps":{"alert":"x",},}"#)),
            ("byte-order-mark", [UInt8(ascii: "0")] + Array("\(token)\n\(topic)\n\n".utf8) + [0xEF, 0xBB, 0xBF] + Array(#"{"aps":{}}"#.utf8)),
            ("utf-16", [UInt8(ascii: "0")] + Array("\(token)\n\(topic)\n\n".utf8) + Array(#"{"aps":{}}"#.utf8).flatMap { [$0, 0] }),
            ("invalid-utf-8", [UInt8(ascii: "0")] + Array("\(token)\n\(topic)\n\n".utf8) + Array(#"{"aps":{"alert":""#.utf8) + [0xED, 0xA0, 0x80, 0xC0, 0xAF] + Array(#""}}"#.utf8)),
            ("lone-surrogate", framed([topic], #"{"aps":{"alert":"\ud800 \udc00"}}"#)),
            ("mdm", framed(["apns-topic:com.apple.mgmt.External.1", "apns-push-type:mdm"], #"{"mdm":"00000000-1111-2222-3333-444444444444"}"#)),
            ("live-activity-loc", framed(["apns-topic:com.example.sports.push-type.liveactivity", "apns-push-type:liveactivity"], #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{"s":1},"alert":{"title":{"loc-key":"K","loc-args":["a"]},"body":"b"}}}"#)),
            ("broadcast", framed(["apns-topic:com.example.sports.push-type.liveactivity", "apns-push-type:liveactivity", "apns-channel-id:dHN0LTIwMjQtMDEtMDE="], #"{"aps":{"event":"update","timestamp":1800000000,"content-state":{}}}"#, key: "")),
            ("duplicate-headers", framed([topic, "APNS-TOPIC:com.example.news", "apns-id", "traceparent:a", "traceparent:b"], #"{"aps":{"alert":"x"}}"#)),
            ("header-formats", framed([topic, "apns-push-type:background", "apns-priority:5", "apns-id:6F1C2A3E-0000-4000-8000-00000000000A", "apns-expiration:0", "apns-collapse-id:c", "app-state:forceQuit"], #"{"aps":{"content-available":1}}"#)),
            ("expired", framed([topic, "apns-expiration:1"], #"{"aps":{"alert":"late"}}"#)),
            ("null-key", framed([topic], #"{"aps":{"alert":"x"}}"#, options: "4")),
            ("tombstone", framed([topic], "", options: "8")),
            ("legacy-size", framed([topic], #"{"aps":{"alert":"\#(String(repeating: "x", count: 260))"}}"#, options: "1")),
            ("ledger-increment", framed([topic, "badge-increment:3"], #"{"aps":{"alert":"x"}}"#, options: "2")),
            ("no-apps", framed(["apns-topic:org.example.any"], #"{"aps":{"alert":"x","mutable-content":1,"interruption-level":"critical","sound":{"critical":1,"name":"a","volume":0.5}}}"#, options: "3")),
        ]
        // Two lines on one device: the request limit and the stored table between records.
        seeds.append(("lines-devices", Array("""
            {"topic":"notifications.devices","key":"\(token)","value":{"online":false},"timestamp":1800000000000}
            {"key":"\(token)","headers":{"apns-topic":"com.example.news","apns-collapse-id":"c"},"value":{"aps":{"alert":"a"}},"timestamp":1800000001000}
            {"topic":"notifications.devices","key":"\(token)","value":{"online":true},"timestamp":1800000002000}
            """.utf8)))
        return seeds
    }
}
