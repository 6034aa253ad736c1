import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// Inside the manager: its flights, locks and tracked logins are keyed by the exact bytes
/// of the names, so a canonically equivalent spelling is another login — never this one's.
@Suite(.timeLimit(.minutes(20))) struct NameIdentityTests {
    @Test func aCanonicallyEquivalentKeyDoesNotJoinAHeldRefreshOrReadItsLogin() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        let kiosk = try ItemKey(service: "com.Kiosk", account: "ada")
        try await h.sessions.save(TokenResponse(accessToken: secure("A1"), expiresIn: 3600, refreshToken: secure("R1")),
                                  provider: h.provider, for: kiosk)
        h.clock.advance(by: 3601)
        h.transport.hold()
        let sessions = h.sessions
        let victim = Task { try await sessions.autoLogin(kiosk) }
        await h.transport.waitForRequests(1)

        // Only a name read back from storage can be spelled so (the API refuses it): it must still
        // be a different login.
        let kelvin = try ItemKey(storedService: "com.\u{212A}iosk", account: "ada")
        let attacker = try await finishes(within: 600) { () async -> String in
            do {
                let result = try await sessions.autoLogin(kelvin)
                guard case .reauthRequired(let reason) = result else { return result.grant == nil ? result.outcome : "a token" }
                return "reauthRequired: \(reason)"
            } catch let error as VaultError {
                return "\(error.code)"
            } catch {
                return "\(error)"
            }
        }
        #expect(attacker != nil, "the canonically equivalent key joined the other login's held refresh")
        // Refused as a name, or answered as what it is: a login that was never stored. Any other
        // reason (an expired or rejected login) would be the other spelling's login speaking.
        #expect(attacker == "invalidArgument" || attacker == "reauthRequired: noSession", "got \(attacker ?? "nothing")")
        #expect(await vaultErrorCode { _ = try await sessions.status(kelvin) } != nil)
        #expect(h.transport.requestCount == 1)

        h.transport.release()
        #expect(try await victim.value.accessToken == "A2")
    }

    @Test func eventsOfOneSpellingAreNotDeliveredAsTheOther() async throws {
        let h = try SessionHarness()
        let cafe = try ItemKey(service: "caf\u{E9}", account: "ada")
        let seen = try await events(of: h.sessions, provider: h.provider) {
            try await h.sessions.save(TokenResponse(accessToken: secure("A1")), provider: h.provider, for: cafe)
        }
        #expect(seen.map(\.key) == [cafe])
        #expect(seen.first?.key != (try ItemKey(storedService: "cafe\u{301}", account: "ada")))
    }
}
