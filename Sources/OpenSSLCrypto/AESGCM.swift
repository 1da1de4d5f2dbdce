import COpenSSLDigest

/// AES in Galois/Counter Mode (NIST SP 800-38D) by OpenSSL's libcrypto, in the combined form
/// `nonce (12 bytes) | ciphertext | tag (16 bytes)`, with no additional authenticated data.
///
/// Each call sets up a cipher context of its own and frees it before it returns, on every path:
/// calls on any number of threads at once share nothing but the key, which they only read.
package enum AESGCM {
    /// The size of the nonce in bytes (96 bits, GCM's recommended size).
    package static let nonceByteCount = 12
    /// The size of the tag in bytes (128 bits, GCM's full tag).
    package static let tagByteCount = 16

    /// The plaintext sealed in `combined` (`nonce | ciphertext | tag`) with `key`, once its tag
    /// verified.
    /// - Throws: ``AESGCMError/inputTooShort(_:)`` below 28 bytes; ``AESGCMError/authenticationFailed``
    ///   when the tag does not verify (no byte of the plaintext is returned then);
    ///   ``AESGCMError/libraryFailure`` when OpenSSL refused otherwise.
    package static func open(combined: some Sequence<UInt8>, using key: AESKey) throws(AESGCMError) -> [UInt8] {
        try withContiguousBytes(of: combined) { combined throws(AESGCMError) in try open(combined: combined, using: key) }
    }

    /// `plaintext` sealed with `key` in the combined form `nonce | ciphertext | tag`.
    ///
    /// - Parameter nonce: 12 bytes, never used twice with one key (GCM loses both secrecy and
    ///   integrity then); nil, the default, draws a random one from OpenSSL's generator.
    /// - Throws: ``AESGCMError/invalidNonceSize(_:)`` for a nonce of other than 12 bytes;
    ///   ``AESGCMError/libraryFailure`` when OpenSSL refused.
    package static func seal(_ plaintext: some Sequence<UInt8>, using key: AESKey, nonce: [UInt8]? = nil) throws(AESGCMError) -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: nonceByteCount)
        if let nonce {
            guard nonce.count == nonceByteCount else { throw .invalidNonceSize(nonce.count) }
            sealed = nonce
        } else {
            let drawn = sealed.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32($0.count)) }
            guard drawn == 1 else { throw .libraryFailure }
        }
        return try withContiguousBytes(of: plaintext) { plaintext throws(AESGCMError) in
            sealed.append(contentsOf: repeatElement(0, count: plaintext.count + tagByteCount))
            let failure = sealed.withUnsafeMutableBufferPointer { sealed in
                seal(plaintext, using: key, into: sealed)
            }
            if let failure { throw failure }
            return sealed
        }
    }

    private static func open(combined: UnsafeBufferPointer<UInt8>, using key: AESKey) throws(AESGCMError) -> [UInt8] {
        guard combined.count >= nonceByteCount + tagByteCount else { throw .inputTooShort(combined.count) }
        let nonce = UnsafeBufferPointer(rebasing: combined[..<nonceByteCount])
        let ciphertext = UnsafeBufferPointer(rebasing: combined[nonceByteCount..<(combined.count - tagByteCount)])
        let tag = UnsafeBufferPointer(rebasing: combined[(combined.count - tagByteCount)...])
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let failure = plaintext.withUnsafeMutableBufferPointer { plaintext in
            withCipherContext { context in
                guard EVP_DecryptInit_ex(context, cipher(for: key), nil, nil, nil) == 1,
                    COpenSSLDigest_gcmSetIVLength(context, Int32(nonceByteCount)) == 1,
                    key.withUnsafeBytes({ EVP_DecryptInit_ex(context, nil, nil, $0.baseAddress, nonce.baseAddress) }) == 1,
                    transform(ciphertext, into: plaintext, with: context, EVP_DecryptUpdate),
                    COpenSSLDigest_gcmSetExpectedTag(context, tag.baseAddress, Int32(tagByteCount)) == 1
                else { return .libraryFailure }
                // Final verifies the tag; GCM writes no bytes there.
                let verified = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { rest in
                    var written: Int32 = 0
                    return EVP_DecryptFinal_ex(context, rest.baseAddress, &written) == 1
                }
                return verified ? nil : .authenticationFailed
            }
        }
        if let failure {
            // Bytes decrypted under a tag that did not verify are no one's to read.
            plaintext.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
            throw failure
        }
        return plaintext
    }

    /// Encrypts `plaintext` into `sealed`, whose first 12 bytes are the nonce and which has room
    /// for the ciphertext and the tag after it; nil, or why not.
    private static func seal(
        _ plaintext: UnsafeBufferPointer<UInt8>, using key: AESKey, into sealed: UnsafeMutableBufferPointer<UInt8>
    ) -> AESGCMError? {
        let nonce = UnsafeBufferPointer(rebasing: sealed[..<nonceByteCount])
        let ciphertext = UnsafeMutableBufferPointer(rebasing: sealed[nonceByteCount..<(nonceByteCount + plaintext.count)])
        let tag = UnsafeMutableBufferPointer(rebasing: sealed[(nonceByteCount + plaintext.count)...])
        return withCipherContext { context in
            let sealed = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { rest in
                var written: Int32 = 0
                return EVP_EncryptInit_ex(context, cipher(for: key), nil, nil, nil) == 1
                    && COpenSSLDigest_gcmSetIVLength(context, Int32(nonceByteCount)) == 1
                    && key.withUnsafeBytes({ EVP_EncryptInit_ex(context, nil, nil, $0.baseAddress, nonce.baseAddress) }) == 1
                    && transform(plaintext, into: ciphertext, with: context, EVP_EncryptUpdate)
                    && EVP_EncryptFinal_ex(context, rest.baseAddress, &written) == 1
                    && COpenSSLDigest_gcmGetTag(context, tag.baseAddress, Int32(tagByteCount)) == 1
            }
            return sealed ? nil : .libraryFailure
        }
    }

    /// Runs `update` (`EVP_EncryptUpdate` or `EVP_DecryptUpdate`) over `input` into `output`, of
    /// the same size (GCM is a stream mode), in pieces an `int` can count; false if OpenSSL refused.
    private static func transform(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>, with context: OpaquePointer,
        _ update: (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<Int32>?, UnsafePointer<UInt8>?, Int32) -> Int32
    ) -> Bool {
        precondition(input.count == output.count)
        let piece = 1 << 30
        var offset = 0
        while offset < input.count {
            let count = min(piece, input.count - offset)
            var written: Int32 = 0
            guard update(context, output.baseAddress! + offset, &written, input.baseAddress! + offset, Int32(count)) == 1,
                Int(written) == count
            else { return false }
            offset += count
        }
        return true
    }

    /// `body`'s answer with a new cipher context, freed (and with it the key schedule, which
    /// OpenSSL clears) when `body` returns; ``AESGCMError/libraryFailure`` if none can be made.
    private static func withCipherContext(_ body: (OpaquePointer) -> AESGCMError?) -> AESGCMError? {
        guard let context = EVP_CIPHER_CTX_new() else { return .libraryFailure }
        defer { EVP_CIPHER_CTX_free(context) }
        return body(context)
    }

    /// AES-GCM for the size of `key`.
    private static func cipher(for key: AESKey) -> OpaquePointer? {
        switch key.byteCount {
        case 16: FetchedAlgorithms.aes128GCM.pointer
        case 24: FetchedAlgorithms.aes192GCM.pointer
        default: FetchedAlgorithms.aes256GCM.pointer
        }
    }

    /// `body`'s answer with `bytes` lent as one buffer: where they lie when they are contiguous,
    /// else gathered into an array first.
    private static func withContiguousBytes<Value>(
        of bytes: some Sequence<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) throws(AESGCMError) -> Value
    ) throws(AESGCMError) -> Value {
        // Result carries the typed error through the standard library's untyped rethrowing calls.
        if let result = bytes.withContiguousStorageIfAvailable({ bytes in Result { () throws(AESGCMError) in try body(bytes) } }) {
            return try result.get()
        }
        return try Array(bytes).withUnsafeBufferPointer { bytes in Result { () throws(AESGCMError) in try body(bytes) } }.get()
    }
}
