import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession
import VaultTesting

/// Refresh answers for fleet tests: each refresh request waits at its gate (if any), then gets the
/// next of `tokens` (`A2`/`R2`, `A3`/`R3`, …); revocations are answered at once.
final class CountingProvider: Sendable {
    let transport: ScriptedOAuthTransport

    /// `gates[n]` holds the n-th refresh request (0-based) until opened; `answers[n]` overrides its answer.
    init(gates: [Int: Gate] = [:], answers: [Int: ScriptedOAuthTransport.Reply] = [:]) {
        let counter = Counter()
        transport = ScriptedOAuthTransport { request in
            guard request["grant_type"] == "refresh_token" else { return .ok }
            let n = await counter.next()
            await gates[n]?.wait()
            return answers[n] ?? .tokens(access: "A\(n + 2)", refresh: "R\(n + 2)")
        }
    }

    /// The refresh tokens sent in refresh requests, in order.
    var refreshTokensSent: [String?] { transport.requests.filter { $0["grant_type"] == "refresh_token" }.map { $0["refresh_token"] } }
    /// The tokens sent for revocation, in order.
    var revoked: [String] { transport.requests.compactMap { $0["token"] } }
}

actor Counter {
    private var value = 0
    func next() -> Int {
        defer { value += 1 }
        return value
    }
}

extension FleetSimulation {
    static let key = SessionHarness.key

    /// Signs in through `manager` with A1/R1, living an hour.
    func signIn(_ manager: SessionManager) async throws {
        try await manager.save(TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")),
                               provider: try testProvider(), for: Self.key)
    }

    /// The login as the store holds it, or nil.
    func storedLogin() async throws -> LoginSession? {
        do {
            return try LoginSession(sealedRecord: try await memory.retrieve(try SessionItems.item(for: Self.key)).secret)
        } catch let error as VaultError where error.code == .notFound {
            return nil
        }
    }

    /// Returns once `count` managers sleep on the fleet's sleeper (waiting for another's refresh);
    /// records an issue if they do not within ten minutes (a hang guard: a busy machine has starved
    /// a task for over a minute).
    func sleepers(_ count: Int) async throws {
        let sleeper = self.sleeper
        let asleep = try await finishes(within: 600) {
            while sleeper.sleeping < count { try await Task.sleep(for: .milliseconds(1)) }
        }
        if asleep == nil { Issue.record("\(count) manager(s) were expected to wait for another's refresh") }
    }
}
