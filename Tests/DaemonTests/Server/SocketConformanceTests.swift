import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore
import VaultCrypto
import VaultTesting

extension DaemonSuite {
    /// The one conformance suite, run against `VaultClient` talking to a live daemon process over its
    /// socket. The daemon reads the test's manual clock from a file (`--unsafe-clock-file`).
    @Suite struct SocketConformanceTests {
        @Test("socket client conforms", arguments: TokenStoreConformance.cases)
        func socketClientConforms(_ check: TokenStoreConformance.Case) async throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("conformance")
            let clockFile = cli.root + "/clock"
            let clock = ManualClock(start: Date()) { date in
                try? "\(date.timeIntervalSince1970)".write(toFile: clockFile, atomically: true, encoding: .utf8)
            }
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", clockFile])
            let client = VaultClient(socketPath: cli.socket)
            let passphrase = SecureBytes(copying: Array("conformance".utf8))
            try await client.unlock(passphrase: passphrase)
            try await check.run(.init(
                store: client, clock: clock,
                lock: { try await client.lockVault() },
                unlock: { try await client.unlock(passphrase: passphrase) }))
            cli.stopDaemon()
        }

        @Test func lockedAndNotFoundStayDistinctOverTheSocket() async throws {
            let cli = try CLIHarness()
            try cli.initPassphraseVault("pw")
            try cli.startDaemon()
            let client = VaultClient(socketPath: cli.socket)
            await #expect(throws: VaultError(.locked, "")) { try await client.retrieve(service: "s", account: "missing") }
            try await client.unlock(passphrase: SecureBytes(copying: Array("pw".utf8)))
            await #expect(throws: VaultError(.notFound, "")) { try await client.retrieve(service: "s", account: "missing") }
            await #expect(throws: VaultError(.wrongPassphrase, "")) { try await client.unlock(passphrase: SecureBytes(copying: Array("nope".utf8))) }
            cli.stopDaemon()
        }

        @Test func unlockingDoesNotHoldUpOtherClients() async throws {
            let cli = try CLIHarness()
            // A real-cost vault: its Argon2id takes about 0.6 s here.
            let created = try cli.run(["init", "--passphrase-fd", "0", "--kdf-cost", "moderate"], input: Data("slow\n".utf8))
            #expect(created.status == 0)
            try cli.startDaemon()
            let unlocking = Task.detached {
                try await VaultClient(socketPath: cli.socket).unlock(passphrase: SecureBytes(copying: Array("slow".utf8)))
            }
            let other = VaultClient(socketPath: cli.socket)
            let unlockStarted = ContinuousClock.now
            var answeredWhileLocked = 0
            var slowest: Duration = .zero
            while true {
                let started = ContinuousClock.now
                let locked = try await other.status().locked
                slowest = max(slowest, ContinuousClock.now - started)
                guard locked else { break }
                answeredWhileLocked += 1
            }
            try await unlocking.value
            let unlock = ContinuousClock.now - unlockStarted
            // Other clients were answered many times while the key derivation ran, each in a fraction
            // of it: a call that waited behind the derivation would take about as long as the unlock.
            #expect(answeredWhileLocked >= 5, "only \(answeredWhileLocked) status calls were answered during the unlock")
            #expect(slowest < unlock / 3, "a status call waited \(slowest) of the unlock's \(unlock)")
            cli.stopDaemon()
        }
    }
}
