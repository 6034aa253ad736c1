import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTesting
@testable import VaultPostgres

@Suite(.timeLimit(.minutes(20))) struct DatabaseDeadlineTests {
    @Test func aCallThatIgnoresCancellationStillEndsAtTheDeadline() async throws {
        let sleeper = ManualSleepClock()
        let clock = ManualClock(mirror: sleeper.reach)
        let deadline = DatabaseDeadline(clock: sleeper, limit: .seconds(3))
        // A query on a silent connection: it never answers and ignores cancellation.
        let silent = Locked<UnsafeContinuation<Void, Never>?>(nil)
        defer { silent.withLock { $0?.resume() } }
        let call = Task {
            try await deadline.run {
                await withUnsafeContinuation { continuation in silent.withLock { $0 = continuation } }
                return 1
            }
        }
        try await sleeper.waitUntilSleeping(1, "the deadline to arm")
        clock.advance(by: 2.9)
        #expect(sleeper.sleeping == 1)
        clock.advance(by: 0.1)
        await expectError(.unavailable) { try await call.value }
    }

    @Test func anAnswerBeforeTheDeadlineIsReturnedAndErrorsAreTranslated() async throws {
        let deadline = DatabaseDeadline(clock: ManualSleepClock(), limit: .seconds(3))
        #expect(try await deadline.run { 42 } == 42)
        await expectError(.notFound) { try await deadline.run { () -> Int in throw VaultError(.notFound, "gone") } }
    }
}

@Suite(.timeLimit(.minutes(20))) struct PostgresSettingsTests {
    @Test func aPasswordFileReadableByOthersIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sv-pw-\(UUID().uuidString)").path
        defer { unlink(path) }
        try "s3cret\nignored\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o644)
        let settings = PostgresSettings(endpoint: .unixSocket(directory: "/run/postgresql"), database: "d", user: "u", passwordFile: path)
        #expect(throws: VaultError(.keySourceRejected, "")) { try settings.clientConfiguration() }
        chmod(path, 0o600)
        #expect(try settings.clientConfiguration().password == "s3cret")
    }

    @Test func aPasswordFileThatIsASymlinkIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sv-pw-\(UUID().uuidString)").path
        let link = path + "-link"
        defer { unlink(path); unlink(link) }
        try "s3cret\n".write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, 0o600)
        symlink(path, link)
        let settings = PostgresSettings(endpoint: .unixSocket(directory: "/run/postgresql"), database: "d", user: "u", passwordFile: link)
        #expect(throws: VaultError(.keySourceRejected, "")) { try settings.clientConfiguration() }
    }

    @Test(arguments: [("127.0.0.1", true), ("127.8.9.10", true), ("::1", true), ("localhost", false),
                      ("10.0.0.5", false), ("db.example.com", false), ("::2", false)])
    func onlyLiteralLoopbackAddressesCountAsLoopback(host: String, loopback: Bool) {
        #expect(PostgresSettings.isLoopback(host) == loopback)
    }

    @Test func serverTimeoutsAndThePoolCapGoIntoEveryConnection() throws {
        let settings = PostgresSettings(endpoint: .tcp(host: "db.example.com"), database: "d", user: "u",
                                        statementTimeout: .milliseconds(1500), lockTimeout: .seconds(2), idleInTransactionTimeout: .seconds(9))
        let configuration = try settings.clientConfiguration()
        #expect(configuration.options.maximumConnections == 4)
        let parameters = Dictionary(uniqueKeysWithValues: configuration.options.additionalStartupParameters)
        #expect(parameters["statement_timeout"] == "1500")
        #expect(parameters["lock_timeout"] == "2000")
        #expect(parameters["idle_in_transaction_session_timeout"] == "9000")
    }
}
