/// The configuration's size syntax: a whole number of bytes (`25165824`), or a number followed by
/// a unit: `B`, `KiB`, `MiB`, `GiB` (powers of 1024) or `kB`, `MB`, `GB` (powers of 1000), with
/// an optional space and decimals allowed when they make whole bytes (`24MiB`, `1.5 MiB`, `512KiB`).
package enum ByteSizeText {
    /// The units, longest suffix first so that `MiB` is not read as `B`.
    private static let units: [(suffix: String, bytes: Double)] = [
        ("KiB", 1_024), ("MiB", 1_048_576), ("GiB", 1_073_741_824), ("kB", 1_000), ("KB", 1_000), ("MB", 1_000_000),
        ("GB", 1_000_000_000), ("B", 1),
    ]

    /// The number of bytes `text` spells, or nil when it is not a size or not a whole number of bytes.
    static func parse(_ text: String) -> Int? {
        let trimmed = text.trimmingWhitespace()
        if !trimmed.isEmpty, trimmed.allSatisfy({ $0.isASCII && $0.isNumber }) { return Int(trimmed) }
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            let number = String(trimmed.dropLast(unit.suffix.count)).trimmingWhitespace()
            guard isPlainDecimal(number), let value = Double(number) else { return nil }
            let bytes = value * unit.bytes
            // Beyond 2^53 a Double no longer holds every whole number; no limit is that large.
            guard bytes.isFinite, bytes < 9e15, bytes == bytes.rounded(.down) else { return nil }
            return Int(bytes)
        }
        return nil
    }

    /// `bytes` for a person: the largest binary unit that spells it whole, with the exact count
    /// when that is not plain bytes (`24 MiB (25165824 bytes)`, `1000 bytes`).
    package static func spell(_ bytes: Int) -> String {
        for (suffix, size) in [("GiB", 1_073_741_824), ("MiB", 1_048_576), ("KiB", 1_024)] where bytes >= size && bytes % size == 0 {
            return "\(bytes / size) \(suffix) (\(bytes) bytes)"
        }
        return "\(bytes) bytes"
    }

    /// Whether `text` is digits with at most one decimal point.
    private static func isPlainDecimal(_ text: String) -> Bool {
        var sawDigit = false
        var sawPoint = false
        for character in text {
            if character.isASCII, character.isNumber {
                sawDigit = true
            } else if character == ".", !sawPoint {
                sawPoint = true
            } else {
                return false
            }
        }
        return sawDigit
    }
}
