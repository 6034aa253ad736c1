import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// `sortedvault help init` (and daemon, recover) showed only `<arguments>`, completion
    /// offered only --version there, help wrapped raggedly, retrieve described no argument, daemon
    /// offered --no-autostart, and options before the verb were "Unknown option".
    @Suite struct HelpTextTests {
        static func help(_ arguments: [String]) throws -> String {
            let (status, out, err) = try Subprocess.run([CLIHarness.executable] + arguments, environment: ["COLUMNS": "80"], input: Data())
            #expect(status == 0, "\(arguments): \(String(decoding: err, as: UTF8.self))")
            return String(decoding: out, as: UTF8.self)
        }

        @Test(arguments: [
            ("init", ["--key-source", "--passphrase-fd", "--kdf-cost", "--data-dir"]),
            ("recover", ["--accept-rollback", "--yes", "--passphrase-fd"]),
            ("daemon", ["--log-level", "--socket-check-seconds", "--access-log-max-bytes", "--socket"]),
        ])
        func theDaemonSideVerbsShowTheirOptionsInHelpManualAndCompletion(_ verb: String, _ options: [String]) throws {
            for text in [try Self.help(["help", verb]), try Self.help([verb, "--help"])] {
                #expect(!text.contains("<arguments>"), "\(text)")
                for option in options { #expect(text.contains(option), "\(verb): \(option) missing in\n\(text)") }
                #expect(!text.contains("--no-autostart"), "\(verb) offers --no-autostart")
            }
            // What the man page generator reads (ManualPageTests): the same options.
            let dump = try Self.help(["--experimental-dump-help"])
            let json = try #require(try JSONSerialization.jsonObject(with: Data(dump.utf8)) as? [String: Any])
            let commands = ((json["command"] as? [String: Any])?["subcommands"] as? [[String: Any]]) ?? []
            let command = try #require(commands.first { $0["commandName"] as? String == verb })
            let names = ((command["arguments"] as? [[String: Any]]) ?? []).flatMap { ($0["names"] as? [[String: Any]]) ?? [] }
                .compactMap { $0["name"] as? String }.map { "--" + $0 }
            for option in options { #expect(names.contains(option), "\(verb) dump: \(names)") }
            let bash = try Self.help(["--generate-completion-script", "bash"])
            for option in options { #expect(bash.contains(option), "bash completion lacks \(option)") }
        }

        @Test func helpIsWrappedByParagraphNotByTheSourceLines() throws {
            for verb in ["log", "unlock", "exec", "session list"] {
                let text = try Self.help(["help"] + verb.split(separator: " ").map(String.init))
                let overview = text.components(separatedBy: "USAGE:")[0]
                // A paragraph's lines, but its last, run close to the 80 columns: a hard line break in
                // the source shows as a short line mid-paragraph.
                for paragraph in overview.components(separatedBy: "\n\n").dropFirst() {
                    let lines = paragraph.split(separator: "\n")
                    for line in lines.dropLast() {
                        #expect(line.count >= 60, "\(verb): a short line mid-paragraph: \(line.debugDescription)\n\(overview)")
                    }
                }
            }
            let retrieve = try Self.help(["retrieve", "--help"])
            #expect(retrieve.contains("The service, e.g. com.sorted.api.") && retrieve.contains("The account within the service."), "\(retrieve)")
        }

        @Test func globalOptionsWorkBeforeTheVerb() throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { cli.stopDaemon() }
            for arguments in [["--socket", cli.socket, "status"], ["--socket=\(cli.socket)", "--no-autostart", "list"],
                              ["--socket", cli.socket, "session", "list"]] {
                let (status, _, err) = try Subprocess.run([CLIHarness.executable] + arguments, environment: cli.environment, input: Data())
                #expect(status == 0, "\(arguments): \(String(decoding: err, as: UTF8.self))")
            }
        }
    }
}
