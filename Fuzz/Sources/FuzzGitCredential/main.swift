import FuzzSupport

runLibFuzzer(fuzzGitCredential)
