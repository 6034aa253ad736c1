import FuzzSupport

// Made before the first input: libFuzzer's leak check counts what a run allocates and keeps.
_ = (sent, sentText)
runLibFuzzer(fuzzTokenResponse)
