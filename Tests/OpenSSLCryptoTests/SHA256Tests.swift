import OpenSSLCrypto
import Testing

/// SHA-256 against the known answers of FIPS 180-4's examples (NIST's "SHA256.pdf" and the short
/// message vectors), whole, piece by piece, and across copies.
@Suite struct SHA256Tests {
    /// A message and its digest.
    struct Vector: Sendable, CustomTestStringConvertible {
        let name: String
        let message: String
        let digest: String

        var testDescription: String { name }
    }

    static let vectors = [
        Vector(name: "empty", message: "", digest: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        Vector(name: "abc", message: "abc", digest: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        Vector(
            name: "448 bits", message: "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            digest: "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        Vector(
            name: "896 bits",
            message: "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            digest: "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ]

    @Test(arguments: vectors)
    func oneShotMatchesTheKnownAnswer(_ vector: Vector) {
        #expect(Hex.text(SHA256.hash(vector.message.utf8)) == vector.digest)
        #expect(Hex.text(SHA256.hash(Array(vector.message.utf8))) == vector.digest)
    }

    @Test(arguments: vectors)
    func piecesOfEverySizeMatchTheKnownAnswer(_ vector: Vector) {
        let message = Array(vector.message.utf8)
        for pieceSize in [1, 3, 63, 64, 65] {
            var hasher = SHA256()
            var start = 0
            while start < message.count {
                let end = min(start + pieceSize, message.count)
                hasher.update(message[start..<end])
                start = end
            }
            #expect(Hex.text(hasher.finalize()) == vector.digest, "pieces of \(pieceSize)")
        }
    }

    @Test func aMillionTimesTheLetterAMatchesTheKnownAnswer() {
        var hasher = SHA256()
        let thousand = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000)
        for _ in 0..<1_000 { hasher.update(thousand) }
        #expect(Hex.text(hasher.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func bytesThatAreNotContiguousHashAsTheSameBytesInAnArray() {
        let letters: [UInt8] = Array("abc".utf8)
        let lazy = (0..<3).lazy.map { letters[$0] }
        #expect(lazy.withContiguousStorageIfAvailable { _ in true } == nil, "the test needs a sequence without contiguous storage")
        #expect(SHA256.hash(lazy) == SHA256.hash(letters))
        var hasher = SHA256()
        hasher.update(lazy)
        #expect(hasher.finalize() == SHA256.hash(letters))
    }

    @Test func aCopyHashesOnIndependentlyOfTheOriginal() {
        var original = SHA256()
        original.update("ab".utf8)
        var copy = original
        original.update("c".utf8)
        copy.update("x".utf8)
        let unchanged = copy
        #expect(original.finalize() == SHA256.hash("abc".utf8))
        #expect(copy.finalize() == SHA256.hash("abx".utf8))
        // Finalising a copy spends nothing the other copies hold.
        #expect(unchanged.finalize() == SHA256.hash("abx".utf8))
        var continued = unchanged
        continued.update("yz".utf8)
        #expect(continued.finalize() == SHA256.hash("abxyz".utf8))
    }

    @Test func copiesOfOneHasherHashOnInParallel() async {
        var prefix = SHA256()
        prefix.update("the shared prefix/".utf8)
        let shared = prefix
        let digests = await withTaskGroup(of: (Int, [UInt8]).self) { group in
            for index in 0..<16 {
                group.addTask {
                    var hasher = shared
                    for _ in 0..<100 { hasher.update("\(index)".utf8) }
                    return (index, hasher.finalize())
                }
            }
            var digests: [Int: [UInt8]] = [:]
            for await (index, digest) in group { digests[index] = digest }
            return digests
        }
        for index in 0..<16 {
            let expected = SHA256.hash(Array("the shared prefix/".utf8) + Array(repeating: Array("\(index)".utf8), count: 100).joined())
            #expect(digests[index] == expected, "task \(index)")
        }
        #expect(shared.finalize() == SHA256.hash("the shared prefix/".utf8))
    }
}
