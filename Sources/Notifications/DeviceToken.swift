package import Records

/// The device token rule (SEMANTICS section 1, check 1): the record's key, 64 to 200 hexadecimal
/// characters of even length, normalised to lowercase wherever it is written.
///
/// The check and the fold work on the key's bytes where they lie, eight at a time, without a
/// branch per byte: a request decided in place never makes a string of its token.
package enum DeviceToken {
    /// Checks a record's key (nil: Kafka's null key).
    /// - Throws: `MissingDeviceToken` or `BadDeviceToken`, naming the key.
    package static func check(_ key: UnsafeRawBufferPointer?) throws(Rejection) {
        guard let key, !key.isEmpty else {
            throw Rejection(.missingDeviceToken, "The device token (the record key) is missing or empty.")
        }
        guard key.count >= 64, key.count <= 200, key.count % 2 == 0 else {
            throw Rejection(
                .badDeviceToken,
                "The device token (the record key) \(MessageText.quote(bytes: key)) has \(key.count) characters; it must have an even number from 64 to 200."
            )
        }
        guard isHexadecimal(key) else {
            throw Rejection(.badDeviceToken, "The device token (the record key) \(MessageText.quote(bytes: key)) is not hexadecimal.")
        }
    }

    /// Whether every byte is a hexadecimal digit.
    private static func isHexadecimal(_ key: UnsafeRawBufferPointer) -> Bool {
        var allHex = true
        let words = key.count / 8
        for word in 0..<words {
            allHex = allHex && Hex.folded(word: key.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)).allHex
        }
        for position in (words * 8)..<key.count {
            allHex = allHex && Hex.folded(key[position]).isHex
        }
        return allHex
    }

    /// Writes a checked token's lowercase form (as many bytes as the token has) at `destination`.
    package static func writeLowercased(_ key: UnsafeRawBufferPointer, to destination: UnsafeMutableRawPointer) {
        let words = key.count / 8
        for word in 0..<words {
            let lower = Hex.folded(word: key.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)).lower
            destination.storeBytes(of: lower, toByteOffset: word * 8, as: UInt64.self)
        }
        for position in (words * 8)..<key.count {
            destination.storeBytes(of: Hex.folded(key[position]).lower, toByteOffset: position, as: UInt8.self)
        }
    }

    /// A checked token's lowercase form, as a string (the owned request keeps one).
    package static func lowercased(_ key: RecordBytes) -> String {
        key.withUnsafeBytes { lowercased($0) }
    }

    /// A checked token's lowercase form, as a string, from its bytes where they lie.
    package static func lowercased(_ key: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: key.count) { text in
            guard let base = text.baseAddress, !key.isEmpty else { return 0 }
            writeLowercased(key, to: UnsafeMutableRawPointer(base))
            return key.count
        }
    }
}

extension Optional where Wrapped == RecordBytes {
    /// Calls `body` with the bytes in memory, or nil for nil.
    func withUnsafeBytesOrNil<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer?) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        guard let bytes = self else { return try body(nil) }
        return try bytes.withUnsafeBytes { (buffer) throws(Failure) -> Result in try body(buffer) }
    }
}
