/// Reads a duration option the way the configuration writes durations: a number and a unit
/// (`500ms`, `10s`, `1.5m`, `1h`); a bare number is refused because its unit would be a guess.
enum DurationOption {
    /// The duration `text` spells, or nil.
    static func parse(_ text: String) -> Duration? {
        let units: [(suffix: String, milliseconds: Double)] = [("ms", 1), ("s", 1_000), ("m", 60_000), ("h", 3_600_000)]
        for unit in units where text.hasSuffix(unit.suffix) {
            let number = text.dropLast(unit.suffix.count)
            guard !number.isEmpty, number.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == ".") }),
                let value = Double(number), value.isFinite, value * unit.milliseconds <= 1e12
            else { continue }
            return .microseconds(Int64((value * unit.milliseconds * 1_000).rounded()))
        }
        return nil
    }
}
