#if FUZZING
import CLibFuzzer
#endif
import Foundation

/// The fuzzer's entry point. Built by `scripts/fuzz` (`-sanitize=fuzzer,address -D FUZZING`), it
/// hands the command line to libFuzzer's driver, which takes libFuzzer's flags and corpus folders
/// (or replays the files named). Built plainly (`swift build`), it replays inputs through the same
/// checks without libFuzzer (``CorpusReplay``).
@main
struct FuzzMain {
    static func main() throws {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, FuzzTarget.callback))
        #else
        try CorpusReplay.main(Array(CommandLine.arguments.dropFirst()))
        #endif
    }
}
