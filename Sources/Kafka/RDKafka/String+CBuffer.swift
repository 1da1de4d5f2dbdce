extension String {
    /// Decodes a NUL-terminated C string from a fixed buffer without trusting the terminator to exist.
    init(cBuffer buffer: [CChar]) {
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        self.init(decoding: bytes, as: UTF8.self)
    }
}
