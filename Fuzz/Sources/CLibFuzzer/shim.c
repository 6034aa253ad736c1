// The declarations in include/CLibFuzzer.h are libFuzzer's (linked by -sanitize=fuzzer); no code here.
