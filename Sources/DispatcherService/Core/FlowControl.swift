/// Decides when the worker must hold its consumer's intake and when it may restart it,
/// from the records and bytes it holds in flight.
///
/// Two limits, records and bytes, each with a low-water mark: the intake is held when either limit
/// is reached, and restarts only when both are back below their low-water marks. The gap between
/// the two marks keeps the worker from holding and restarting on every record. The core turns a
/// change of ``isHolding`` into a decision for the consumer (``WorkerCore``, ``IntakeChange``).
struct FlowControl: Sendable {
    let maxRecords: Int
    let maxBytes: Int
    let resumeRecords: Int
    let resumeBytes: Int

    private(set) var records = 0
    private(set) var bytes = 0
    /// Whether the intake is to be held.
    private(set) var isHolding = false

    /// - Parameters:
    ///   - maxRecords: records in flight at which the intake is held.
    ///   - maxBytes: bytes in flight at which the intake is held.
    ///   - resumeRatio: the fraction of each limit below which the intake restarts (0 < ratio < 1).
    init(maxRecords: Int, maxBytes: Int, resumeRatio: Double) {
        self.maxRecords = max(1, maxRecords)
        self.maxBytes = max(1, maxBytes)
        let ratio = min(max(resumeRatio, 0), 1)
        self.resumeRecords = Int(Double(self.maxRecords) * ratio)
        self.resumeBytes = Int(Double(self.maxBytes) * ratio)
    }

    /// Accounts for a record taken into flight.
    mutating func admitted(bytes size: Int) {
        records += 1
        change(bytes: size)
    }

    /// Accounts for bytes a record in flight holds besides its own (its outputs, written but not
    /// yet acknowledged), without counting another record.
    mutating func holding(bytes size: Int) {
        change(bytes: size)
    }

    /// Accounts for bytes given back by ``holding(bytes:)``.
    mutating func releasing(bytes size: Int) {
        change(bytes: -size)
    }

    /// Accounts for a record that left flight (done, or dropped with its partition).
    mutating func released(bytes size: Int) {
        records -= 1
        change(bytes: -size)
    }

    /// Moves the bytes, then holds at either limit or restarts below both low-water marks.
    private mutating func change(bytes delta: Int) {
        bytes += delta
        if !isHolding, records >= maxRecords || bytes >= maxBytes {
            isHolding = true
        } else if isHolding, records <= resumeRecords, bytes <= resumeBytes {
            isHolding = false
        }
    }
}
