import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// The man pages are generated (scripts/install-man, swift-argument-parser's generate-manual) from
    /// what each executable prints with `--experimental-dump-help`; these tests check that every
    /// executable still describes its commands there, and that the completions know the new verbs.
    @Suite struct ManualPageTests {
        static func dumpedHelp(_ executable: String) throws -> [String: Any] {
            let (status, out, err) = try Subprocess.run([executable, "--experimental-dump-help"], environment: [:], input: Data())
            guard status == 0, let json = try JSONSerialization.jsonObject(with: out) as? [String: Any],
                  let command = json["command"] as? [String: Any] else {
                throw HarnessError("\(executable) --experimental-dump-help failed: \(String(decoding: err, as: UTF8.self))")
            }
            return command
        }

        static func subcommands(_ command: [String: Any]) -> [String] {
            (command["subcommands"] as? [[String: Any]] ?? []).compactMap { $0["commandName"] as? String }
        }

        @Test func everyExecutableDescribesItsCommandsForTheManualGenerator() throws {
            let cli = try Self.dumpedHelp(CLIHarness.executable)
            #expect(cli["commandName"] as? String == "sortedvault")
            #expect(Set(Self.subcommands(cli)).isSuperset(of: ["store", "retrieve", "session", "exec", "git", "daemon", "init", "recover"]))
            let fleet = try Self.dumpedHelp(try CLIHarness.sibling("sortedvault-fleet-daemon"))
            #expect(Set(Self.subcommands(fleet)).isSuperset(of: ["daemon", "init"]))
            let docker = try Self.dumpedHelp(try CLIHarness.sibling("docker-credential-sortedvault"))
            #expect(docker["commandName"] as? String == "docker-credential-sortedvault")
            #expect(Set(Self.subcommands(docker)).isSuperset(of: ["store", "get", "erase", "list", "version"]))
            let git = try Self.dumpedHelp(try CLIHarness.sibling("git-credential-sortedvault"))
            #expect(git["commandName"] as? String == "git-credential-sortedvault")
            #expect((git["abstract"] as? String)?.contains("credential helper") == true)
        }

        @Test func theCompletionScriptsKnowExecAndGitBind() throws {
            for shell in ["bash", "zsh", "fish"] {
                let (status, out, _) = try Subprocess.run([CLIHarness.executable, "--generate-completion-script", shell], environment: [:], input: Data())
                let script = String(decoding: out, as: UTF8.self)
                #expect(status == 0)
                #expect(script.contains("exec") && script.contains("bind"), "\(shell)")
            }
        }
    }
}
