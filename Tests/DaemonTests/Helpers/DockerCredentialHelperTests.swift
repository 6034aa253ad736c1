import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// One protocol script, run against docker-credential-sortedvault (live daemon) and against Debian's
    /// reference helper docker-credential-pass (throw-away gpg key and pass store): the answers the
    /// protocol fixes are the same bytes, the others the same exit status.
    @Suite struct DockerCredentialHelperTests {
        struct Step {
            let action: String
            let input: String
            /// Whether stdout must be the same bytes (else only the exit status is compared).
            let sameBytes: Bool
        }

        static let script: [Step] = [
            Step(action: "list", input: "", sameBytes: true),
            // A secret with everything Go's encoder escapes: quotes, <, >, &, U+2028, a control byte, non-ASCII.
            Step(action: "store", input: #"{"ServerURL":"https://index.docker.io/v1/","Username":"ada","Secret":"s3<cr>&t\"x é\u2028\u0001\u0008\u000c\t"}"#, sameBytes: true),
            Step(action: "get", input: "https://index.docker.io/v1/\n", sameBytes: true),
            Step(action: "store", input: "{\"ServerURL\": \"registry.example.com:5000\",\n \"Username\": \"bob\", \"Secret\": \"pw\"}\n", sameBytes: true),
            Step(action: "get", input: "registry.example.com:5000", sameBytes: true),
            Step(action: "list", input: "", sameBytes: true),
            Step(action: "erase", input: "https://index.docker.io/v1/\n", sameBytes: true),
            Step(action: "list", input: "", sameBytes: true),
            Step(action: "store", input: #"{"ServerURL":"","Username":"ada","Secret":"x"}"#, sameBytes: true),
            Step(action: "store", input: #"{"ServerURL":"https://x.example/","Username":"","Secret":"x"}"#, sameBytes: true),
            Step(action: "get", input: "\n", sameBytes: true),
            Step(action: "erase", input: "", sameBytes: true),
            Step(action: "store", input: "not json", sameBytes: false),
            Step(action: "erase", input: "https://never-stored.example/\n", sameBytes: false),
        ]

        @Test func theSameScriptGivesTheSameAnswersAsDockerCredentialPass() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("docker-credential-sortedvault")
            let reference = try PassStore(root: cli.root)
            defer { reference.stop() }

            for (number, step) in Self.script.enumerated() {
                let mine = try cli.runProgram([ours, step.action], input: Data(step.input.utf8))
                let theirs = try cli.runProgram(["/usr/bin/docker-credential-pass", step.action], input: Data(step.input.utf8),
                                                extra: reference.environment)
                let label = "step \(number + 1): \(step.action) \(step.input.debugDescription)"
                #expect(mine.status == theirs.status, "\(label): ours \(mine.status) \(mine.text) \(mine.stderr), pass \(theirs.status) \(theirs.text)")
                if step.sameBytes {
                    #expect(mine.stdout == theirs.stdout, "\(label): ours \(mine.text.debugDescription), pass \(theirs.text.debugDescription)")
                }
            }
            cli.stopDaemon()
        }

        /// docker's client library recognises a missing login by this exact message and exit 1
        /// (`credentials.IsErrCredentialsNotFoundMessage`). docker-credential-pass 0.6.4 instead answers
        /// empty credentials with exit 0, which docker also reads as "no login"; the message is fixed
        /// by the protocol's own library, so we follow it.
        @Test func aMissingLoginIsTheExactNotFoundMessageWithExitOne() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("docker-credential-sortedvault")
            let result = try cli.runProgram([ours, "get"], input: Data("https://nothere.example/\n".utf8))
            #expect(result.status == 1)
            #expect(result.text == "credentials not found in native keychain\n")
            // The login lives in the vault as the documented item.
            #expect(try cli.runProgram([ours, "store"], input: Data(#"{"ServerURL":"ghcr.io","Username":"ada","Secret":"tok"}"#.utf8)).status == 0)
            #expect(try cli.run(["retrieve", "docker:ghcr.io", "ada"]).text == "tok")
            cli.stopDaemon()
        }

        /// Errors go to standard output (docker shows them) and never carry the secret.
        @Test func aLockedVaultIsReportedWithoutTheSecret() throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("correct passphrase")
            try cli.startDaemon()
            let ours = try CLIHarness.sibling("docker-credential-sortedvault")
            #expect(try cli.run(["lock"]).status == 0)
            let result = try cli.runProgram([ours, "store"], input: Data(#"{"ServerURL":"ghcr.io","Username":"ada","Secret":"very-secret-token"}"#.utf8))
            #expect(result.status == 1)
            #expect(result.text.contains("locked"), "\(result.text)")
            #expect(!(result.text + result.stderr).contains("very-secret-token"))
            cli.stopDaemon()
        }
    }
}
