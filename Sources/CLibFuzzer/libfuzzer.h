#ifndef CLIBFUZZER_LIBFUZZER_H
#define CLIBFUZZER_LIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt's FuzzerInterface.h): parses libFuzzer's flags from the
/// command line and fuzzes `callback`, or runs the inputs named. Linked by `-sanitize=fuzzer`
/// only: the fuzzer (`Sources/Fuzz`) calls it from its own `main` under `-D FUZZING`, because
/// SwiftPM gives an executable's `main` to its Swift entry point, where libFuzzer's own `main`
/// cannot take it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
