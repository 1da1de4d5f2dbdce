import Foundation
import TestSupport
import Testing

/// The fuzzer's committed corpus (docs/testing.md, "Fuzzing") replayed through the fuzzer's
/// checks by its plain build: every input the fuzzer kept for the coverage it reached ends as a
/// decision or a dead letter with its reason, and its payload reads the same with every reader.
@Suite("the fuzzer's corpus (Fuzz/corpus)")
struct FuzzCorpusTests {
    static let root = BuiltBinary.packageRoot()

    @Test("every input of the committed corpus passes the fuzzer's checks")
    func corpusReplays() async throws {
        let corpus = Self.root.appendingPathComponent("Fuzz/corpus")
        let inputs = try FileManager.default.contentsOfDirectory(atPath: corpus.path).count
        #expect(inputs > 100, "the corpus holds \(inputs) inputs")
        let run = try await BuiltBinary.run(["Fuzz/corpus"], executable: "notification-dispatcher-fuzz", limit: .seconds(600))
        #expect(run.status == 0, "\(run.standardOutput.suffix(4_000))\(run.standardError.suffix(2_000))")
        #expect(run.standardOutput.contains("fuzz: replayed \(inputs) inputs, 0 with findings"), "\(run.standardOutput.suffix(2_000))")
    }
}
