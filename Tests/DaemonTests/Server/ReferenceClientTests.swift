import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// The PyPI `varlink` package — the reference implementation — talking to the real daemon.
    @Suite struct ReferenceClientTests {
        static func python() throws -> String {
            let python = CLIHarness.repository + "/.venv/bin/python3"
            guard FileManager.default.isExecutableFile(atPath: python) else {
                throw HarnessError("no Python venv at \(python): run scripts/install-deps to create it with the varlink reference package")
            }
            return python
        }

        @Test func referenceClientCallsGetInfoAndRetrieveOnTheDaemon() throws {
            let python = try Self.python()
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "com.sorted.api", "ada"], input: Data("token-for-python".utf8)).status == 0)

            let (infoStatus, info, infoErr) = try Subprocess.run(
                [python, "-m", "varlink.cli", "call", "unix:\(cli.socket)/org.varlink.service.GetInfo", "{}"],
                environment: cli.environment, input: Data())
            let infoText = String(decoding: info, as: UTF8.self)
            #expect(infoStatus == 0, "\(String(decoding: infoErr, as: UTF8.self))")
            #expect(infoText.contains("org.sortedvault.vault"), "\(infoText)")

            let (retrieveStatus, retrieved, retrieveErr) = try Subprocess.run(
                [python, "-m", "varlink.cli", "call", "unix:\(cli.socket)/org.sortedvault.vault.Retrieve",
                 #"{"service": "com.sorted.api", "account": "ada"}"#],
                environment: cli.environment, input: Data())
            #expect(retrieveStatus == 0, "\(String(decoding: retrieveErr, as: UTF8.self))")
            let reply = try JSONSerialization.jsonObject(with: retrieved) as? [String: Any]
            #expect(reply?["secret"] as? String == Data("token-for-python".utf8).base64EncodedString())

            // The reference client parses our interface description, and sees our typed errors.
            let (_, missing, missingErr) = try Subprocess.run(
                [python, "-m", "varlink.cli", "call", "unix:\(cli.socket)/org.sortedvault.vault.Retrieve",
                 #"{"service": "com.sorted.api", "account": "nobody"}"#],
                environment: cli.environment, input: Data())
            let missingText = String(decoding: missing + missingErr, as: UTF8.self)
            #expect(missingText.contains("org.sortedvault.vault.NotFound"), "\(missingText)")

            let (describeStatus, described, _) = try Subprocess.run(
                [python, "-m", "varlink.cli", "info", "unix:\(cli.socket)"], environment: cli.environment, input: Data())
            #expect(describeStatus == 0)
            #expect(String(decoding: described, as: UTF8.self).contains("org.sortedvault.vault"))
            cli.stopDaemon()
        }
    }
}
