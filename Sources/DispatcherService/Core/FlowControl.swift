/// Decides when the worker must hold its consumer's intake and when it may restart it,
/// from the records and bytes it holds in flight.
///
/// Two limits, records and bytes, each with a low-water mark: pausing happens when either limit is
/// reached, resuming only when both are back below their low-water marks. The gap between the two
/// marks keeps the worker from pausing and resuming on every record.
struct FlowControl: Sendable {
    /// What the worker must do with its partitions after a change.
    enum Action: Sendable, Equatable {
        case pause
        case resume
    }

    let maxRecords: Int
    let maxBytes: Int
    let resumeRecords: Int
    let resumeBytes: Int

    private(set) var records = 0
    private(set) var bytes = 0
    private(set) var isPaused = false

    /// - Parameters:
    ///   - maxRecords: records in flight at which fetching pauses.
    ///   - maxBytes: bytes of record values in flight at which fetching pauses.
    ///   - resumeRatio: the fraction of each limit below which fetching resumes (0 < ratio < 1).
    init(maxRecords: Int, maxBytes: Int, resumeRatio: Double) {
        self.maxRecords = max(1, maxRecords)
        self.maxBytes = max(1, maxBytes)
        let ratio = min(max(resumeRatio, 0), 1)
        self.resumeRecords = Int(Double(self.maxRecords) * ratio)
        self.resumeBytes = Int(Double(self.maxBytes) * ratio)
    }

    /// Accounts for a record taken into flight.
    @discardableResult
    mutating func admitted(bytes size: Int) -> Action? {
        records += 1
        bytes += size
        if !isPaused, records >= maxRecords || bytes >= maxBytes {
            isPaused = true
            return .pause
        }
        return nil
    }

    /// Accounts for bytes a record in flight holds besides its own (its outputs, written but not
    /// yet acknowledged), without counting another record.
    @discardableResult
    mutating func holding(bytes size: Int) -> Action? {
        bytes += size
        if !isPaused, bytes >= maxBytes {
            isPaused = true
            return .pause
        }
        return nil
    }

    /// Accounts for bytes given back by ``holding(bytes:)``.
    @discardableResult
    mutating func releasing(bytes size: Int) -> Action? {
        bytes -= size
        if isPaused, records <= resumeRecords, bytes <= resumeBytes {
            isPaused = false
            return .resume
        }
        return nil
    }

    /// Accounts for a record that left flight (done, or dropped with its partition).
    @discardableResult
    mutating func released(bytes size: Int) -> Action? {
        records -= 1
        bytes -= size
        if isPaused, records <= resumeRecords, bytes <= resumeBytes {
            isPaused = false
            return .resume
        }
        return nil
    }
}
