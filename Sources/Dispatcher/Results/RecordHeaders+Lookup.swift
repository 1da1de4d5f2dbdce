import Records

extension Array where Element == RecordHeader {
    /// The value of the last header named `name` (given in lowercase; matched without regard to
    /// case) that has a value, nil when none has: of repeated headers the last wins (section 1).
    func lastValue(named name: String) -> RecordBytes? {
        last { $0.value != nil && $0.name.lowercased() == name }?.value
    }
}
