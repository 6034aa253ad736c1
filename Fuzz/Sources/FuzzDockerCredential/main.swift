import FuzzSupport

runLibFuzzer(fuzzDockerCredential)
