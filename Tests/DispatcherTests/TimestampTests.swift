import Foundation
import Testing

@testable import Dispatcher

@Suite("RFC 3339 timestamps")
struct TimestampTests {
    @Test("the fast rendering is Foundation's, character for character, across centuries, leap days and millisecond edges")
    func sameAsFoundation() {
        var generator = SystemRandomNumberGenerator()
        var dates: [Date] = [
            Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: -0.001), Date(timeIntervalSince1970: 0.9995),
            Date(timeIntervalSince1970: 951_782_400), Date(timeIntervalSince1970: 4_107_542_399.999),
            Date(timeIntervalSince1970: 1_795_000_000.123_456), Date(timeIntervalSince1970: -62_135_596_800),
            Date(timeIntervalSince1970: 253_402_300_799.999),
        ]
        for _ in 0..<20_000 {
            dates.append(Date(timeIntervalSince1970: Double.random(in: -2_208_988_800...4_102_444_800, using: &generator)))
        }
        for _ in 0..<5_000 {
            // Whole and nearly whole milliseconds, where rounding and truncation part.
            let milliseconds = Double(Int64.random(in: 0...4_102_444_800_000, using: &generator))
            dates.append(Date(timeIntervalSince1970: milliseconds / 1_000))
            dates.append(Date(timeIntervalSince1970: (milliseconds + 0.9999) / 1_000))
        }
        var mismatches: [String] = []
        for date in dates where Timestamp.rfc3339(date) != Timestamp.foundation(date) {
            mismatches.append("\(date.timeIntervalSince1970): \(Timestamp.rfc3339(date)) vs \(Timestamp.foundation(date))")
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) differ, e.g. \(mismatches.prefix(5))")
    }
}
