/// SHA-1 (FIPS 180-4), only for name-based UUIDs: Linux Foundation has no SHA-1 and this module takes
/// no other dependency. Not for security.
struct SHA1 {
    /// The running state: five 32-bit words.
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)

    /// The digest of `message`: 20 bytes.
    static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        var hasher = SHA1()
        var padded = Array(message)
        let bitLength = UInt64(padded.count) &* 8
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { padded.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }
        var words = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            hasher.process(padded, blockStart, &words)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(20)
        for word in [hasher.state.0, hasher.state.1, hasher.state.2, hasher.state.3, hasher.state.4] {
            digest.append(contentsOf: [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)])
        }
        return digest
    }

    /// Mixes one 64-byte block into the state.
    private mutating func process(_ bytes: [UInt8], _ start: Int, _ words: inout [UInt32]) {
        for index in 0..<16 {
            let offset = start + index * 4
            words[index] = UInt32(bytes[offset]) << 24 | UInt32(bytes[offset + 1]) << 16 | UInt32(bytes[offset + 2]) << 8 | UInt32(bytes[offset + 3])
        }
        for index in 16..<80 {
            words[index] = (words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]).rotatedLeft(by: 1)
        }
        var (a, b, c, d, e) = state
        for index in 0..<80 {
            let mixed: UInt32
            let constant: UInt32
            switch index {
            case 0..<20: (mixed, constant) = ((b & c) | (~b & d), 0x5A82_7999)
            case 20..<40: (mixed, constant) = (b ^ c ^ d, 0x6ED9_EBA1)
            case 40..<60: (mixed, constant) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
            default: (mixed, constant) = (b ^ c ^ d, 0xCA62_C1D6)
            }
            let next = a.rotatedLeft(by: 5) &+ mixed &+ e &+ constant &+ words[index]
            (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, next)
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}

extension UInt32 {
    /// Rotates the bits left.
    fileprivate func rotatedLeft(by count: UInt32) -> UInt32 { self << count | self >> (32 - count) }
}
