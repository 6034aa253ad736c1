#ifndef SORTEDVAULT_CLIBFUZZER_H
#define SORTEDVAULT_CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver for programs with their own `main` (FuzzerDriver.cpp, LLVM 12 and later):
/// parses libFuzzer's flags from argv and calls `callback` with each input.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
