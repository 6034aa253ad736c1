import FuzzSupport

runLibFuzzer(fuzzPolicy)
