import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import Varlink
import VaultSession

extension DaemonSuite {
    /// `List` / `sortedvault session list` show the logins a client may see under its
    /// policy (`session.list`, matched against each login's service), and never a token.
    @Suite struct SessionListDaemonTests {
        /// The test process may save anywhere but list only com.sorted.api; the CLI may list only
        /// com.sorted.other. The CLI is two executables: the lean `sortedvault` hands `session list`
        /// to `sortedvault-cli`, which is the peer the daemon sees.
        static func policy(testProcess: String) -> String {
            """
            [[rule]]
            name = "app-saves"
            effect = "allow"
            uids = ["@self"]
            executables = ["\(testProcess)"]
            operations = ["session.save"]
            services = ["*"]

            [[rule]]
            name = "app-lists-its-own"
            effect = "allow"
            uids = ["@self"]
            executables = ["\(testProcess)"]
            operations = ["session.list", "session.status"]
            services = ["com.sorted.api"]

            [[rule]]
            name = "cli-lists-other"
            effect = "allow"
            uids = ["@self"]
            executables = ["\(CLIHarness.executable)", "\(CLIHarness.executable)-cli"]
            operations = ["session.list"]
            services = ["com.sorted.other"]
            """
        }

        @Test func listShowsOnlyTheLoginsThePolicyLetsTheCallerSeeAndNoTokens() async throws {
            let world = try SessionDaemonTests.World(access: Self.policy(testProcess: SessionNameConfusionTests.testExecutable))
            defer { world.cli.stopDaemon() }
            let api = try await world.signIn()
            let other = try ItemKey(service: "com.sorted.other", account: "bob")
            let second = try await world.provider.signIn()
            guard case .object(let object) = try JSONValue.parse(second) else { throw HarnessError("bad token response") }
            try await world.sessions.save(tokenResponse: object, provider: try world.provider.provider(), for: other)

            let mine = try await world.sessions.list()
            #expect(mine.map { "\($0.service)/\($0.account)" } == ["com.sorted.api/ada"])
            #expect(mine.first?.state == "valid" && mine.first?.hasRefreshToken == true)
            #expect(try await world.sessions.list(service: "com.sorted.api").count == 1)
            await #expect(throws: VaultError(.permissionDenied, "")) { try await world.sessions.list(service: "com.sorted.other") }

            let cli = try world.cli.run(["session", "list", "--json", "--no-autostart"])
            #expect(cli.status == 0, "\(cli.stderr)")
            guard case .object(let reply) = try JSONValue.parse(Array(cli.stdout)),
                  case .array(let logins)? = reply["logins"] else { Issue.record("bad JSON: \(cli.text)"); return }
            #expect(logins.compactMap { $0.objectValue?["service"]?.stringValue } == ["com.sorted.other"])
            #expect(logins.compactMap { $0.objectValue?["account"]?.stringValue } == ["bob"])
            // One JSON style with list --json and status --json: pretty, times as ISO 8601.
            let expires = logins.first?.objectValue?["accessTokenExpiresAt"]?.stringValue
            #expect(expires.map { (try? Date($0, strategy: .iso8601)) != nil } == true, "\(cli.text)")
            #expect(cli.text.contains("\n  \""), "not pretty-printed: \(cli.text)")
            let text = try world.cli.run(["session", "list", "--no-autostart"])
            #expect(text.status == 0 && text.text.contains("com.sorted.other  bob  valid"), "\(text.text)")
            for response in [api, second] {
                for field in ["access_token", "refresh_token"] {
                    let token = try #require(response.jsonField(field))
                    #expect(!cli.text.contains(token) && !text.text.contains(token), "session list printed a token")
                }
            }
        }
    }
}
