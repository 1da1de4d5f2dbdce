import Dispatcher
import JSON
import Notifications
import Testing

/// The quoted literals the delivery writer copies (Sources/Dispatcher/Results/QuotedJSON.swift)
/// are each case's `rawValue` as a JSON string, for every case.
@Suite("Quoted enumeration literals")
struct QuotedJSONTests {
    /// `value`'s literal, and the JSON string the writer makes of its raw value.
    static func pair(_ literal: StaticString, _ rawValue: String) -> (literal: String, expected: String) {
        var writer = JSONWriter()
        writer.write(string: rawValue)
        return (literal.description, String(decoding: writer.bytes, as: UTF8.self))
    }

    @Test("every case of every enumeration a delivery writes: its literal is its raw value, quoted")
    func everyCase() {
        var pairs: [(literal: String, expected: String)] = []
        pairs += PushType.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += Disposition.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += DeliveryReason.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += BadgeEffect.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += AppState.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += AppCallback.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += InterruptionLevel.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs += UserAlert.FocusEffect.allCases.map { Self.pair($0.quotedJSON, $0.rawValue) }
        pairs.append(Self.pair(UserAlert.willPresentQuotedJSON, UserAlert.willPresentMethod))
        #expect(pairs.count == 11 + 3 + 21 + 3 + 5 + 6 + 4 + 4 + 1)
        let wrong = pairs.filter { $0.literal != $0.expected }
        #expect(wrong.isEmpty, "\(wrong)")
    }
}
