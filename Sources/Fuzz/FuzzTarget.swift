import Foundation

/// One input, checked: what libFuzzer calls for each input it makes (``FuzzMain``), and what the
/// replay of a corpus (``CorpusReplay``) calls for each file.
enum FuzzTarget {
    /// Decodes and checks `bytes` (``FuzzInput``, ``RecordCheck``); what was found wrong.
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) -> Findings {
        var findings = Findings()
        if let input = FuzzInput.decode(bytes) { RecordCheck.check(input, findings: &findings) }
        return findings
    }

    /// libFuzzer's callback: a finding aborts, so that libFuzzer keeps the input as a crash, as it
    /// does for a trap or a sanitizer's report; a hang is its `-timeout`.
    static let callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt = { data, size in
        let findings = FuzzTarget.run(UnsafeBufferPointer(start: data, count: size))
        guard findings.isEmpty else {
            for message in findings.messages { FileHandle.standardError.write(Data("fuzz: \(message)\n".utf8)) }
            abort()
        }
        return 0
    }
}

#if FUZZING
/// libFuzzer's callback under the name its runtime refers to: the fuzzer's `main` hands
/// ``FuzzTarget/callback`` to the driver itself, but the runtime's own `main`, linked into
/// unoptimised builds, names this symbol.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.callback(data, size)
}
#endif
