package import Foundation
import JSON

/// RFC 3339 timestamps with milliseconds in UTC (`2026-11-22T03:04:05.678Z`).
package enum Timestamp {
    /// `date` as RFC 3339 with milliseconds: what `Date.ISO8601FormatStyle(includingFractionalSeconds:
    /// true)` writes, without its calendar and time-zone machinery (3 % of the worker's CPU for
    /// the two timestamps of every delivery). Dates outside years 1583 to 9999 go to Foundation.
    package static func rfc3339(_ date: Date) -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            guard let count = write(date, into: buffer) else { return foundation(date) }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<count]), as: UTF8.self)
        }
    }

    /// Appends `date` as ``rfc3339(_:)`` writes it to `output`, with no string in between (the
    /// timestamps of every delivery record).
    static func write(_ date: Date, to writer: inout JSONWriter) {
        var written = false
        writer.write(upTo: 24) { room in
            guard let count = write(date, into: room.bindMemory(to: UInt8.self)) else { return 0 }
            written = true
            return count
        }
        if !written {
            var text = foundation(date)
            text.withUTF8 { writer.append(bytes: UnsafeRawBufferPointer($0)) }
        }
    }

    /// Writes the 24 bytes of `date` in RFC 3339 with milliseconds into `buffer` (room for 24);
    /// nil for a date the fast path leaves to Foundation.
    private static func write(_ date: Date, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int? {
        // Foundation counts from 2001 and truncates the fraction of the second as the double
        // holds it (…37.448 stored as …37.4479999 shows as .447): the same here, so that outputs
        // stay what they were.
        let sinceReference = date.timeIntervalSinceReferenceDate
        let wholeSeconds = sinceReference.rounded(.down)
        guard wholeSeconds.isFinite, abs(wholeSeconds) < 2.5e11 else { return nil }
        let fraction = Int64(((sinceReference - wholeSeconds) * 1_000).rounded(.down))
        let total = (Int64(wholeSeconds) + 978_307_200) * 1_000 + fraction
        let (days, millisecondOfDay) = floorDivision(total, 86_400_000)
        let (year, month, day) = civil(fromDaysSinceEpoch: days)
        // Before 1583 Foundation's calendar is the Julian one.
        guard (1583...9999).contains(year) else { return nil }
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1_000 % 60
        let millisecond = millisecondOfDay % 1_000
        var count = 0
        func append(_ value: Int64, digits: Int) {
            var divisor: Int64 = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                buffer[count] = UInt8(ascii: "0") + UInt8(value / divisor % 10)
                count += 1
                divisor /= 10
            }
        }
        func append(_ byte: UInt8) {
            buffer[count] = byte
            count += 1
        }
        append(year, digits: 4)
        append(UInt8(ascii: "-"))
        append(month, digits: 2)
        append(UInt8(ascii: "-"))
        append(day, digits: 2)
        append(UInt8(ascii: "T"))
        append(hour, digits: 2)
        append(UInt8(ascii: ":"))
        append(minute, digits: 2)
        append(UInt8(ascii: ":"))
        append(second, digits: 2)
        append(UInt8(ascii: "."))
        append(millisecond, digits: 3)
        append(UInt8(ascii: "Z"))
        return count
    }

    /// `date` in whole milliseconds since the epoch, rounded down.
    static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1_000).rounded(.down))
    }

    /// `date` in whole seconds since the epoch, rounded down.
    static func seconds(_ date: Date) -> Int64 {
        Int64(date.timeIntervalSince1970.rounded(.down))
    }

    /// The date of an RFC 3339 time as ``rfc3339(_:)`` writes it (`2026-11-22T03:04:05.678Z`),
    /// made as a line's `timestamp` makes one (milliseconds over 1000), so that it is written
    /// back the same; nil for any other text.
    static func parse(_ text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 24, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"), bytes[19] == UInt8(ascii: "."),
            bytes[23] == UInt8(ascii: "Z")
        else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for byte in bytes[range] {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), let hour = number(11..<13),
            let minute = number(14..<16), let second = number(17..<19), let millisecond = number(20..<23),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let milliseconds = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + millisecond
        return Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysSinceEpoch(year: Int64, month: Int64, day: Int64) -> Int64 {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivision(shiftedYear, 400).0
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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

extension Timestamp {
    /// The text of the last date written, written again without working it out: the records of
    /// one batch share their time of processing, and a delivery decided at once has it as both
    /// `receivedAt` and `deliveredAt` (about 500 instructions a record under callgrind).
    struct Cache {
        private var date: Date?
        /// The text's bytes (24 at most), and how many; 0 for a date Foundation writes.
        private var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
        private var count = 0

        /// Appends `date` as ``Timestamp/write(_:to:)`` does.
        mutating func write(_ date: Date, to writer: inout JSONWriter) {
            if date != self.date {
                self.date = date
                count = withUnsafeMutableBytes(of: &text) { Timestamp.write(date, into: $0.bindMemory(to: UInt8.self)) } ?? 0
            }
            guard count > 0 else { return Timestamp.write(date, to: &writer) }
            withUnsafeBytes(of: text) { writer.append(bytes: UnsafeRawBufferPointer(rebasing: $0[..<count])) }
        }
    }
}

