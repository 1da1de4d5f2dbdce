/// SHA-1 (FIPS 180-4), only for name-based UUIDs: Linux Foundation has no SHA-1 and this module takes
/// no other dependency. Not for security. Works in stack buffers: no allocation per digest.
struct SHA1 {
    /// The five 32-bit words of a digest, in order.
    typealias Digest = (UInt32, UInt32, UInt32, UInt32, UInt32)

    /// The running state.
    private var state: Digest = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)

    /// The digest of `message` as 20 bytes.
    static func hash(_ message: some Collection<UInt8>) -> [UInt8] {
        let words = Array(message).withUnsafeBytes { digest(of: $0) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        for word in [words.0, words.1, words.2, words.3, words.4] {
            for shift in [24, 16, 8, 0] as [UInt32] { bytes.append(UInt8(truncatingIfNeeded: word >> shift)) }
        }
        return bytes
    }

    /// The digest of `message`.
    static func digest(of message: UnsafeRawBufferPointer) -> Digest {
        var hasher = SHA1()
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 80) { schedule in
            let fullBlocks = message.count / 64
            for block in 0..<fullBlocks {
                hasher.process(UnsafeRawBufferPointer(rebasing: message[(block * 64)..<(block * 64 + 64)]), schedule)
            }
            // The tail, the 0x80 marker and the bit length fill one or two final blocks.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 128) { tail in
                let remainder = message.count - fullBlocks * 64
                let tailLength = remainder < 56 ? 64 : 128
                tail.initialize(repeating: 0)
                for offset in 0..<remainder { tail[offset] = message[fullBlocks * 64 + offset] }
                tail[remainder] = 0x80
                let bitLength = UInt64(message.count) &* 8
                for offset in 0..<8 { tail[tailLength - 1 - offset] = UInt8(truncatingIfNeeded: bitLength >> (UInt64(offset) * 8)) }
                let raw = UnsafeRawBufferPointer(tail)
                hasher.process(UnsafeRawBufferPointer(rebasing: raw[0..<64]), schedule)
                if tailLength == 128 { hasher.process(UnsafeRawBufferPointer(rebasing: raw[64..<128]), schedule) }
            }
            return hasher.state
        }
    }

    /// Mixes one 64-byte block into the state, using `words` (80 entries) as the message schedule.
    private mutating func process(_ block: UnsafeRawBufferPointer, _ words: UnsafeMutableBufferPointer<UInt32>) {
        for index in 0..<16 {
            let offset = index * 4
            words[index] = UInt32(block[offset]) << 24 | UInt32(block[offset + 1]) << 16 | UInt32(block[offset + 2]) << 8 | UInt32(block[offset + 3])
        }
        for index in 16..<80 {
            words[index] = (words[index - 3] ^ words[index - 8] ^ words[index - 14] ^ words[index - 16]).rotatedLeft(by: 1)
        }
        var (a, b, c, d, e) = state
        // Four loops of twenty rounds, one per round function, so no branch sits inside a round.
        for index in 0..<20 {
            let next = a.rotatedLeft(by: 5) &+ ((b & c) | (~b & d)) &+ e &+ 0x5A82_7999 &+ words[index]
            (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, next)
        }
        for index in 20..<40 {
            let next = a.rotatedLeft(by: 5) &+ (b ^ c ^ d) &+ e &+ 0x6ED9_EBA1 &+ words[index]
            (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, next)
        }
        for index in 40..<60 {
            let next = a.rotatedLeft(by: 5) &+ ((b & c) | (b & d) | (c & d)) &+ e &+ 0x8F1B_BCDC &+ words[index]
            (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, next)
        }
        for index in 60..<80 {
            let next = a.rotatedLeft(by: 5) &+ (b ^ c ^ d) &+ e &+ 0xCA62_C1D6 &+ words[index]
            (e, d, c, b, a) = (d, c, b.rotatedLeft(by: 30), a, next)
        }
        state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e)
    }
}

extension UInt32 {
    /// Rotates the bits left.
    fileprivate func rotatedLeft(by count: UInt32) -> UInt32 { self << count | self >> (32 - count) }
}
