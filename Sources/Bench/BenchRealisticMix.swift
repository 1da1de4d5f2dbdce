import DispatcherTools
import Foundation
import Kafka
import Records

extension BenchRequest {
    /// The bundle IDs of the realistic mix's apps (configured in every contender).
    static let realisticApps = ["com.example.news", "com.example.shop", "com.example.chat"]

    /// Requests as a provider sends them, the same for every run of `bench compare`: per 200,
    /// 60 alerts with `mutable-content` (no extension is configured, so delivered as they are),
    /// 51 alerts without, 40 silent background pushes, 25 badge-only and 18 sound-only updates,
    /// and 6 that fail: 2 with a bad priority, 2 of broken JSON, 1 for an app that is not
    /// configured, 1 over the 4 KB limit. Values are 200–500 bytes for three in four, 500–1,200
    /// for one in five, 1,200–4,000 for the rest (4,100–4,300 for the oversized), so the 300,000
    /// of a full run fit the embedded broker's 5 MiB per partition at 64 partitions; in every
    /// `style` (the padding is what gives way to the whitespace, so a value keeps its size unless
    /// its structure alone is longer). Each request goes to a device of its own, or to `devices`
    /// devices in turn, with the `apns-*` headers a provider sets.
    static func realistic(count: Int, seed: UInt64 = 13, style: JSONStyle = .compact, devices: Int = 0) -> [BenchRequest] {
        var random = SeededRandom(seed: seed)
        return (0..<count).map { index in
            let kind = index % 200
            let app = realisticApps[index % realisticApps.count]
            let apnsID = String(format: "00000000-0000-4000-8000-%012x", index)
            var headers = [RecordHeader(name: "apns-topic", value: kind == 197 ? "com.example.unknown" : app), RecordHeader(name: "apns-id", value: apnsID)]
            let band = Int.random(in: 0..<100, using: &random)
            var size = band < 75 ? Int.random(in: 200...500, using: &random)
                : band < 95 ? Int.random(in: 500...1_200, using: &random) : Int.random(in: 1_200...4_000, using: &random)
            let aps: String
            switch kind {
            case 0..<60:
                headers.append(RecordHeader(name: "apns-push-type", value: "alert"))
                aps = #"{"alert":{"title":"Order \#(index) shipped","body":"Your parcel is on its way"},"mutable-content":1,"sound":"default","category":"ORDER"}"#
            case 60..<110, 199:
                headers += [RecordHeader(name: "apns-push-type", value: "alert"), RecordHeader(name: "apns-priority", value: "10")]
                aps = #"{"alert":{"title":"Anna","subtitle":"Lunch","body":"Are we still on for 12:30?"},"badge":\#(index % 9),"thread-id":"chat-\#(index % 40)"}"#
            case 110..<150:
                headers += [RecordHeader(name: "apns-push-type", value: "background"), RecordHeader(name: "apns-priority", value: "5")]
                aps = #"{"content-available":1}"#
            case 150..<175:
                headers.append(RecordHeader(name: "apns-push-type", value: "alert"))
                aps = #"{"badge":\#(index % 50)}"#
            case 175..<193:
                headers.append(RecordHeader(name: "apns-push-type", value: "alert"))
                aps = #"{"sound":"chime.caf"}"#
            case 193, 194:
                headers.append(RecordHeader(name: "apns-priority", value: "7"))
                aps = #"{"alert":"invalid priority"}"#
            case 195, 196: aps = #"{"alert":"broken JSON"#
            case 197: aps = #"{"alert":"for an app that is not configured"}"#
            default:
                size = Int.random(in: 4_100...4_300, using: &random)
                aps = #"{"alert":"too large"}"#
            }
            if index % 4 == 0 { headers.append(RecordHeader(name: "apns-expiration", value: "1900000000")) }
            if index % 5 == 0 { headers.append(RecordHeader(name: "apns-collapse-id", value: "c-\(index % 1_000)")) }
            if index % 2 == 0 {
                headers.append(RecordHeader(name: "traceparent", value: String(format: "00-%032x-%016x-01", index, index)))
            }
            let prefix = Array(#"{"aps":\#(aps),"data":{"id":\#(1_000_000 + index),"kind":"\#(kind)","text":""#.utf8)
            // Broken JSON: the closing braces never come.
            let closing = kind == 195 || kind == 196 ? [] : Array(#""}}"#.utf8)
            let value = styled(prefix: prefix, paddedTo: size, closing: closing, style: style)
            return BenchRequest(key: deviceToken(devices > 0 ? index % devices : index), headers: headers, value: value, apnsID: apnsID)
        }
    }

    /// `prefix` (compact JSON that ends inside a string), filler words in that string, then
    /// `closing`, written in `style` and `size` bytes long where the text without filler is
    /// shorter. Compact, it is the bytes as given.
    static func styled(prefix: [UInt8], paddedTo size: Int, closing: [UInt8], style: JSONStyle) -> [UInt8] {
        var writer = StyledJSONWriter(style: style)
        writer.write(prefix)
        // What the closing adds in this style, written by a copy that carries on from here.
        var end = writer
        end.write(closing)
        let words = Array("lorem ipsum dolor sit amet consectetur ".utf8)
        // Inside a string: the writer copies the filler as it is.
        for position in 0..<max(0, size - end.output.count) { writer.write(words[position % words.count]) }
        writer.write(closing)
        return writer.output
    }
}
