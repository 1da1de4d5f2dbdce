import OpenSSLCrypto
import Testing

/// AES-GCM against the test cases of McGrew and Viega's GCM specification (those with a 96-bit
/// IV and no additional data, which NIST SP 800-38D's examples repeat), and every way a sealed
/// record can be wrong.
@Suite struct AESGCMTests {
    /// One test case: key, nonce, plaintext, ciphertext and tag.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let key: String
        let nonce: String
        let plaintext: String
        let ciphertext: String
        let tag: String

        var testDescription: String { name }
        /// `nonce | ciphertext | tag`.
        var combined: [UInt8] { Hex.bytes(nonce + ciphertext + tag) }
    }

    static let specificationPlaintext =
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"

    static let vectors = [
        Vector(
            name: "test case 1 (AES-128, empty)", key: String(repeating: "0", count: 32), nonce: String(repeating: "0", count: 24),
            plaintext: "", ciphertext: "", tag: "58e2fccefa7e3061367f1d57a4e7455a"),
        Vector(
            name: "test case 2 (AES-128, one block)", key: String(repeating: "0", count: 32), nonce: String(repeating: "0", count: 24),
            plaintext: String(repeating: "0", count: 32), ciphertext: "0388dace60b6a392f328c2b971b2fe78",
            tag: "ab6e47d42cec13bdf53a67b21257bddf"),
        Vector(
            name: "test case 3 (AES-128, four blocks)", key: "feffe9928665731c6d6a8f9467308308", nonce: "cafebabefacedbaddecaf888",
            plaintext: specificationPlaintext,
            ciphertext: "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
            tag: "4d5c2af327cd64a62cf35abd2ba6fab4"),
        Vector(
            name: "test case 7 (AES-192, empty)", key: String(repeating: "0", count: 48), nonce: String(repeating: "0", count: 24),
            plaintext: "", ciphertext: "", tag: "cd33b28ac773f74ba00ed1f312572435"),
        Vector(
            name: "test case 8 (AES-192, one block)", key: String(repeating: "0", count: 48), nonce: String(repeating: "0", count: 24),
            plaintext: String(repeating: "0", count: 32), ciphertext: "98e7247c07f0fe411c267e4384b0f600",
            tag: "2ff58d80033927ab8ef4d4587514f0fb"),
        Vector(
            name: "test case 9 (AES-192, four blocks)", key: "feffe9928665731c6d6a8f9467308308feffe9928665731c",
            nonce: "cafebabefacedbaddecaf888", plaintext: specificationPlaintext,
            ciphertext: "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256",
            tag: "9924a7c8587336bfb118024db8674a14"),
        Vector(
            name: "test case 13 (AES-256, empty)", key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24),
            plaintext: "", ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"),
        Vector(
            name: "test case 14 (AES-256, one block)", key: String(repeating: "0", count: 64), nonce: String(repeating: "0", count: 24),
            plaintext: String(repeating: "0", count: 32), ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
            tag: "d0d1c8a799996bf0265b98b5d48ab919"),
        Vector(
            name: "test case 15 (AES-256, four blocks)", key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            nonce: "cafebabefacedbaddecaf888", plaintext: specificationPlaintext,
            ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
            tag: "b094dac5d93471bdec1a502270e3cc6c"),
    ]

    /// Test case 15, the one the failure cases change.
    static var aes256: Vector { vectors[8] }

    @Test(arguments: vectors)
    func sealingGivesTheKnownCiphertextAndTag(_ vector: Vector) throws {
        let key = try AESKey(Hex.bytes(vector.key))
        let sealed = try AESGCM.seal(Hex.bytes(vector.plaintext), using: key, nonce: Hex.bytes(vector.nonce))
        #expect(Hex.text(sealed) == vector.nonce + vector.ciphertext + vector.tag)
    }

    @Test(arguments: vectors)
    func openingGivesTheKnownPlaintext(_ vector: Vector) throws {
        let key = try AESKey(Hex.bytes(vector.key))
        #expect(Hex.text(try AESGCM.open(combined: vector.combined, using: key)) == vector.plaintext)
    }

    @Test(arguments: [
        ("a nonce byte", 0), ("the last nonce byte", 11), ("a ciphertext byte", 12), ("the last ciphertext byte", 75),
        ("a tag byte", 76), ("the last tag byte", 91),
    ])
    func aChangedBitAnywhereFailsAuthentication(_ place: String, index: Int) throws {
        let key = try AESKey(Hex.bytes(Self.aes256.key))
        var combined = Self.aes256.combined
        #expect(combined.count == 92)
        combined[index] ^= 0x01
        #expect(throws: AESGCMError.authenticationFailed, "\(place)") { try AESGCM.open(combined: combined, using: key) }
    }

    @Test func anotherKeyFailsAuthentication() throws {
        var other = Hex.bytes(Self.aes256.key)
        other[31] ^= 0x80
        let key = try AESKey(other)
        #expect(throws: AESGCMError.authenticationFailed) { try AESGCM.open(combined: Self.aes256.combined, using: key) }
    }

    @Test func aTruncatedInputFails() throws {
        let key = try AESKey(Hex.bytes(Self.aes256.key))
        let combined = Self.aes256.combined
        // Still long enough for a nonce and a tag: the tag is then the wrong bytes.
        for cut in [1, 16, 64] {
            #expect(throws: AESGCMError.authenticationFailed, "\(cut) bytes cut") {
                try AESGCM.open(combined: combined.dropLast(cut), using: key)
            }
        }
        // Shorter than a nonce and a tag.
        for length in [0, 1, 12, 27] {
            #expect(throws: AESGCMError.inputTooShort(length)) { try AESGCM.open(combined: combined.prefix(length), using: key) }
        }
    }

    @Test func onlyKeysOf128192And256BitsAreAccepted() throws {
        for bytes in [16, 24, 32] {
            #expect(try AESKey([UInt8](repeating: 7, count: bytes)).byteCount == bytes)
        }
        for bytes in [0, 1, 15, 17, 23, 25, 31, 33, 64] {
            #expect(throws: AESGCMError.invalidKeySize(bytes)) { try AESKey([UInt8](repeating: 7, count: bytes)) }
        }
        // A key from bytes without contiguous storage is the same key.
        let key = Hex.bytes(Self.aes256.key)
        let lazy = try AESKey(key.indices.lazy.map { key[$0] })
        #expect(Hex.text(try AESGCM.open(combined: Self.aes256.combined, using: lazy)) == Self.aes256.plaintext)
    }

    @Test func aNonceOfAnotherSizeIsRefused() throws {
        let key = try AESKey([UInt8](repeating: 1, count: 32))
        for bytes in [0, 8, 11, 13, 16] {
            #expect(throws: AESGCMError.invalidNonceSize(bytes)) {
                try AESGCM.seal([1, 2, 3], using: key, nonce: [UInt8](repeating: 0, count: bytes))
            }
        }
    }

    @Test func sealingWithoutANonceDrawsAFreshOneEachTime() throws {
        let key = try AESKey([UInt8](repeating: 3, count: 32))
        let plaintext = Array("the same words twice".utf8)
        let first = try AESGCM.seal(plaintext, using: key)
        let second = try AESGCM.seal(plaintext, using: key)
        #expect(first.count == AESGCM.nonceByteCount + plaintext.count + AESGCM.tagByteCount)
        #expect(first.prefix(AESGCM.nonceByteCount) != second.prefix(AESGCM.nonceByteCount))
        #expect(try AESGCM.open(combined: first, using: key) == plaintext)
        #expect(try AESGCM.open(combined: second, using: key) == plaintext)
    }

    @Test(arguments: [16, 24, 32])
    func everyLengthRoundTrips(keyBytes: Int) throws {
        let key = try AESKey((0..<keyBytes).map { UInt8($0 * 7 & 0xFF) })
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 255, 4_096, 1 << 20] {
            let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
            let sealed = try AESGCM.seal(plaintext, using: key)
            #expect(sealed.count == length + 28)
            #expect(try AESGCM.open(combined: sealed, using: key) == plaintext, "\(length) bytes")
        }
    }
}
