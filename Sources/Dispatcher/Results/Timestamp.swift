import Foundation

/// RFC 3339 timestamps with milliseconds in UTC (`2026-11-22T03:04:05.678Z`).
enum Timestamp {
    /// `date` as RFC 3339 with milliseconds: what `Date.ISO8601FormatStyle(includingFractionalSeconds:
    /// true)` writes, without its calendar and time-zone machinery (3 % of the worker's CPU for
    /// the two timestamps of every delivery). Dates outside years 1583 to 9999 go to Foundation.
    static func rfc3339(_ date: Date) -> String {
        // Foundation counts from 2001 and truncates the fraction of the second as the double
        // holds it (…37.448 stored as …37.4479999 shows as .447): the same here, so that outputs
        // stay what they were.
        let sinceReference = date.timeIntervalSinceReferenceDate
        let wholeSeconds = sinceReference.rounded(.down)
        guard wholeSeconds.isFinite, abs(wholeSeconds) < 2.5e11 else { return foundation(date) }
        let fraction = Int64(((sinceReference - wholeSeconds) * 1_000).rounded(.down))
        let total = (Int64(wholeSeconds) + 978_307_200) * 1_000 + fraction
        let (days, millisecondOfDay) = floorDivision(total, 86_400_000)
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        // Before 1583 Foundation's calendar is the Julian one.
        guard (1583...9999).contains(year) else { return foundation(date) }
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1_000 % 60
        let millisecond = millisecondOfDay % 1_000
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func append(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        append(year, digits: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, digits: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, digits: 2)
        bytes.append(UInt8(ascii: "T"))
        append(hour, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(minute, digits: 2)
        bytes.append(UInt8(ascii: ":"))
        append(second, digits: 2)
        bytes.append(UInt8(ascii: "."))
        append(millisecond, digits: 3)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Foundation's rendering, for dates the fast path leaves out.
    static func foundation(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// Quotient and remainder rounded towards negative infinity (dates before 1970).
    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        let quotient = value / divisor
        let remainder = value % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }

    /// The proleptic Gregorian date of a day counted from 1970-01-01 (Howard Hinnant's
    /// `civil_from_days`).
    private static func civil(fromDaysSinceEpoch days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let shifted = days + 719_468
        let era = floorDivision(shifted, 146_097).0
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
