import Foundation  // memcmp

extension CaseIterable where Self: RawRepresentable, RawValue == String {
    /// The case whose raw value is exactly these UTF-8 bytes (no case folding, as APNs compares),
    /// or nil; read without making a string of them (a header value, a payload string).
    init?(utf8 bytes: UnsafeBufferPointer<UInt8>) {
        guard let given = bytes.baseAddress else { return nil }
        for candidate in Self.allCases {
            // Raw values are literals: their bytes are lent in place, two buffers compared.
            var name = candidate.rawValue
            // Lengths first (a literal's is stored): most candidates differ in it, and comparing
            // every candidate's bytes was 2 % of `bench validation`. Then `memcmp`: the generic
            // `elementsEqual` of two buffers compared a byte per step (1.5 %).
            guard name.utf8.count == bytes.count else { continue }
            if name.withUTF8({ memcmp($0.baseAddress!, given, bytes.count) == 0 }) {
                self = candidate
                return
            }
        }
        return nil
    }
}
