/// The configuration's duration syntax: a non-negative number followed by `ms`, `s`, `m` or `h`
/// (`500ms`, `30s`, `1.5m`, `1h`); a bare number is refused because its unit would be a guess.
package enum DurationText {
    /// The duration `text` spells, or nil when it is not a duration.
    static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingWhitespace()
        let units: [(suffix: String, milliseconds: Double)] = [
            ("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000),
        ]
        for unit in units where trimmed.hasSuffix(unit.suffix) {
            let number = String(trimmed.dropLast(unit.suffix.count))
            guard isPlainDecimal(number), let value = Double(number) else { continue }
            let milliseconds = value * unit.milliseconds
            guard milliseconds.isFinite, milliseconds <= 1e15 else { return nil }
            return .microseconds(Int64((milliseconds * 1_000).rounded()))
        }
        return nil
    }

    /// `duration` in the configuration's syntax, in the largest unit that spells it whole
    /// (`10m`, `90s`, `1500ms`).
    package static func spell(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1_000 + duration.components.attoseconds / 1_000_000_000_000_000
        for (suffix, size) in [("h", Int64(3_600_000)), ("m", 60_000), ("s", 1_000)] where milliseconds % size == 0 {
            return "\(milliseconds / size)\(suffix)"
        }
        return "\(milliseconds)ms"
    }

    /// Whether `text` is digits with at most one decimal point (no sign, no exponent, no spaces).
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
