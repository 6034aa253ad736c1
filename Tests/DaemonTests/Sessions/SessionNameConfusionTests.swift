import Foundation
import TestSupport
import Testing
import VaultAPI
import Varlink
import VaultClient
import VaultCore
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A client allowed `com.\u{212A}*` (KELVIN SIGN) and denied `com.Kiosk` must never reach
    /// the `com.Kiosk` login by spelling its name another, canonically equivalent way.
    @Suite struct SessionNameConfusionTests {
        /// The test process is the victim app (any operation); the venv's Python is the attacker,
        /// allowed the session API on `com.\u{212A}*` and denied `com.Kiosk`. (The deny rule names
        /// operations rather than "*": a deny of every operation would also refuse the attacker at
        /// accept, and the attack would never reach the session API.)
        static func policy(victim: String, attacker: String) -> String {
            """
            [[rule]]
            name = "victim-app"
            effect = "allow"
            uids = ["@self"]
            executables = ["\(victim)"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "attacker-kelvin"
            effect = "allow"
            uids = ["@self"]
            executables = ["\(attacker)"]
            operations = ["session.*"]
            services = ["com.\u{212A}*"]

            [[rule]]
            name = "attacker-not-kiosk"
            effect = "deny"
            uids = ["@self"]
            executables = ["\(attacker)"]
            operations = ["session.autologin", "session.refresh", "session.status", "session.logout", "session.list"]
            services = ["com.Kiosk"]
            """
        }

        static var testExecutable: String {
            var buffer = [CChar](repeating: 0, count: 4096)
            let length = readlink("/proc/self/exe", &buffer, 4095)
            return String(decoding: buffer[0..<max(length, 0)].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }

        /// One AutoLogin from the attacker's process, straight on the socket: (outcome, token, error name).
        static func attackerAutoLogin(_ world: SessionDaemonTests.World, service: String) throws -> (String?, String?, String?) {
            let go = world.cli.root + "/go-attacker"
            _ = FileManager.default.createFile(atPath: go, contents: Data())
            let script = CLIHarness.repository + "/Tests/Support/session-burst.py"
            let (status, out, err) = try Subprocess.run(
                [OAuthTestProvider.python, script, world.cli.socket, service, "ada", "1", go],
                environment: ProcessInfo.processInfo.environment, input: Data())
            guard status == 0, let line = String(decoding: out, as: UTF8.self).split(separator: "\n").last,
                  case .array(let results) = try JSONValue.parse(Array(line.utf8)), case .object(let result)? = results.first else {
                throw HarnessError("the attacker script failed (\(status)): \(String(decoding: err, as: UTF8.self))")
            }
            return (result["outcome"]?.stringValue, result["token"]?.stringValue, result["error"]?.stringValue)
        }

        @Test func aKelvinSignNameNeitherJoinsNorReadsTheLoginItIsCanonicallyEquivalentTo() async throws {
            let attacker = try #require(realpath(OAuthTestProvider.python, nil).map { path in
                defer { free(path) }
                return String(cString: path)
            })
            let world = try SessionDaemonTests.World(access: Self.policy(victim: Self.testExecutable, attacker: attacker))
            defer { world.cli.stopDaemon() }
            let victimKey = try ItemKey(service: "com.Kiosk", account: "ada")
            let response = try await world.provider.signIn()
            guard case .object(let object) = try JSONValue.parse(response) else { throw HarnessError("bad token response") }
            try await world.sessions.save(tokenResponse: object, provider: try world.provider.provider(), for: victimKey)

            // The policy does what it says to the attacker's process when it names the login plainly.
            let plain = try Self.attackerAutoLogin(world, service: "com.Kiosk")
            #expect(plain.2 == "org.sortedvault.session.PermissionDenied", "\(plain)")

            // While the victim's refresh is in flight (held at the provider)…
            world.clock.advance(by: 3600)
            try await world.provider.control("/test/delay", ["seconds": 5])
            let sessions = world.sessions
            async let victim = sessions.autoLogin(victimKey)
            let deadline = Date().addingTimeInterval(600)
            while try await world.provider.refreshResponses(200) == 0 && Date() < deadline { usleep(20_000) }
            #expect(try await world.provider.refreshResponses(200) == 1, "the victim's refresh never reached the provider")

            // …the attacker asks for the same login spelled with KELVIN SIGN.
            let attack = try Self.attackerAutoLogin(world, service: "com.\u{212A}iosk")
            let victimResult = try await victim
            #expect(victimResult.outcome == "refreshed")
            let victimToken = try #require(victimResult.grant?.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
            #expect(attack.1 == nil && attack.0 == nil, "the attacker got an answer: \(attack.0 ?? "")")
            #expect(attack.1 != victimToken, "the attacker received the victim's access token")
            #expect(attack.2 == "org.sortedvault.session.InvalidParameter" || attack.2 == "org.sortedvault.session.PermissionDenied",
                    "\(String(describing: attack.2))")
            // Nor afterwards, when the victim's token is simply valid.
            let after = try Self.attackerAutoLogin(world, service: "com.\u{212A}iosk")
            #expect(after.1 == nil && after.2 == "org.sortedvault.session.InvalidParameter", "\(after)")
            #expect(try await world.provider.refreshRequests() == 1)
        }

        @Test func theSessionAPIRefusesANameThatIsNotNFCWithAClearError() async throws {
            let world = try SessionDaemonTests.World()
            defer { world.cli.stopDaemon() }
            let response = try await world.provider.signIn()
            guard case .object(let object) = try JSONValue.parse(response) else { throw HarnessError("bad token response") }
            let connection = try VarlinkConnection(unixSocketPath: world.cli.socket)
            defer { connection.close() }
            for (service, account) in [("cafe\u{301}", "ada"), ("com.sorted.api", "\u{212B}sa")] {
                do {
                    _ = try connection.call("org.sortedvault.session.Save", [
                        "service": .string(service), "account": .string(account), "tokenResponse": .object(object),
                        "provider": .object(VarlinkWire.jsonObject(SessionInterface.Provider(try world.provider.provider()))),
                    ])
                    Issue.record("Save accepted a name that is not NFC")
                } catch let error as VarlinkError {
                    #expect(error.name == "org.sortedvault.session.InvalidParameter")
                    #expect(error.parameters["reason"]?.stringValue?.contains("NFC") == true, "\(error.parameters)")
                }
            }
        }
    }
}
