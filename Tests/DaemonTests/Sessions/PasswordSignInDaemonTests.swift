import BoundedJSON
import Foundation
import TestSupport
import Testing
import VaultSession

extension DaemonSuite {
    /// `sortedvault session login --flow password` end to end: the real CLI and daemon against the
    /// Firebase and GoTrue stand-ins (the official supabase-auth client checks the GoTrue stand-in's
    /// password and signup endpoints in `StandInAgreementTests`).
    @Suite struct PasswordSignInDaemonTests {
        static func server(_ kind: ProviderKind) throws -> ProviderServer {
            try ProviderServer(kind == .firebase ? .firebase : .supabase)
        }

        /// The API key on descriptor 3 and the password on descriptor 4, never on argv.
        static func login(_ cli: CLIHarness, _ server: ProviderServer, _ kind: ProviderKind, email: String, password: String,
                          _ extra: [String] = []) throws -> CLIHarness.Result {
            let url = kind == .firebase ? server.base + "/securetoken.googleapis.com" : server.base
            return try cli.run(["session", "login", "com.sorted.api", email, "--flow", "password", "--kind", kind.rawValue,
                                "--url", url, "--api-key-fd", "3", "--password-fd", "4"] + extra,
                               prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<<A 4<<B\n\(server.apiKey ?? "")\nA\n\(password)\nB"])
        }

        /// A vault and its daemon (with its log); stop it when done.
        static func cli() throws -> CLIHarness {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            try cli.startDaemon()
            return cli
        }

        @Test(arguments: [ProviderKind.supabase, .firebase])
        func aPasswordSignInIsStoredAndAWrongPasswordExitsEightAndIsNeverShown(_ kind: ProviderKind) async throws {
            let server = try Self.server(kind)
            let cli = try Self.cli()
            defer { _ = cli.stopDaemon() }
            let wrong = try Self.login(cli, server, kind, email: ProviderServer.email, password: "not the password")
            #expect(wrong.status == 8, "\(wrong.stderr)")
            #expect(!wrong.stderr.contains("not the password"))

            let signedIn = try Self.login(cli, server, kind, email: ProviderServer.email, password: ProviderServer.password)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect(signedIn.text.contains("signed in: com.sorted.api \(ProviderServer.email)"), "\(signedIn.text)")
            let token = try cli.run(["session", "autologin", "com.sorted.api", ProviderServer.email])
            #expect(token.status == 0 && token.text.count > 10, "\(token.stderr)")
            let places: [(String, Data)] = [("daemon log", try cli.daemonLog()), ("access log", FileManager.default.contents(atPath: cli.accessLogPath) ?? Data()),
                                            ("stderr", Data(signedIn.stderr.utf8)), ("stdout", Data(signedIn.text.utf8))]
            for (name, bytes) in places {
                for (what, secret) in [("the password", ProviderServer.password), ("the API key", try #require(server.apiKey)), ("the access token", token.text.trimmingCharacters(in: .whitespacesAndNewlines))] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) holds \(what)")
                }
            }
            if kind == .supabase {
                // The official client, against the same stand-in in the same run: its password and
                // signup endpoints answer as GoTrue's do.
                let script = ProviderServer.supportDirectory + "/gotrue-standin/official_client_check.py"
                let (status, stdout, stderr) = try Subprocess.run(
                    [ProviderServer.python, script, "--url", server.base, "--anon-key-file", server.stateDirectory + "/anon-key"],
                    environment: ProcessInfo.processInfo.environment, input: Data())
                #expect(status == 0, "supabase-auth disagrees:\n\(String(decoding: stdout, as: UTF8.self))\n\(String(decoding: stderr, as: UTF8.self))")
            }
        }

        @Test(arguments: [ProviderKind.supabase, .firebase])
        func createSignsUpANewAccountThatThenSignsIn(_ kind: ProviderKind) async throws {
            let server = try Self.server(kind)
            let cli = try Self.cli()
            defer { _ = cli.stopDaemon() }
            let email = "new-\(UUID().uuidString.prefix(8).lowercased())@example.com"
            let created = try Self.login(cli, server, kind, email: email, password: "a long new password", ["--create"])
            #expect(created.status == 0, "\(created.stderr)")
            let again = try Self.login(cli, server, kind, email: email, password: "a long new password")
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try cli.run(["session", "status", "com.sorted.api", email]).text.contains("state: valid"))
        }

        /// Without --password-fd the password is asked for on the terminal (a tmux pane here), with
        /// echo off: the pane never shows it.
        @Test func thePasswordIsAskedForOnTheTerminalWithoutEcho() async throws {
            let server = try Self.server(.supabase)
            let cli = try Self.cli()
            defer { _ = cli.stopDaemon() }
            try (server.apiKey ?? "").write(toFile: cli.root + "/anon-key", atomically: true, encoding: .utf8)
            let terminal = try TmuxTerminal(
                [CLIHarness.executable, "session", "login", "com.sorted.api", ProviderServer.email, "--flow", "password",
                 "--kind", "supabase", "--url", server.base, "--api-key-fd", "3", "--no-autostart"],
                redirections: "3<'\(cli.root)/anon-key'", environment: cli.environment, directory: cli.root)
            _ = try terminal.waitForScreen { $0.contains("Password for \(ProviderServer.email):") }
            try terminal.type(ProviderServer.password)
            let exit = try terminal.exitStatus()
            let shown = try terminal.screen()
            #expect(exit == 0, "\(shown)")
            #expect(shown.contains("signed in: com.sorted.api \(ProviderServer.email)"), "\(shown)")
            #expect(!shown.contains(ProviderServer.password), "the password was echoed:\n\(shown)")
        }

        @Test func aFirebaseAccountWithASecondFactorIsToldMultiFactorSignInIsNotSupportedYet() async throws {
            let server = try Self.server(.firebase)
            let cli = try Self.cli()
            defer { _ = cli.stopDaemon() }
            try await server.control("/test/enroll-mfa", ["email": .string(ProviderServer.email)])
            let refused = try Self.login(cli, server, .firebase, email: ProviderServer.email, password: ProviderServer.password)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("multi-factor sign-in is not supported yet"), "\(refused.stderr)")
        }
    }
}
