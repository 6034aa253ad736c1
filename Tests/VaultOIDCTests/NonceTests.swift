import BoundedJSON
import Foundation
import Testing
import VaultCrypto
@testable import VaultOIDC

/// The nonce of a sign-in the vault began (OpenID Connect Core §3.1.3.7 item 11): an id token must
/// carry exactly it, so a token minted for another sign-in cannot be injected into this one.
@Suite(.timeLimit(.minutes(20))) struct NonceTests {
    let signer = TestSigner()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let nonce = SecureBytes(text: "n-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG")

    func verify(_ claims: [String: JSONValue], nonce: SecureBytes?) throws -> VerifiedIDToken {
        let verifier = IDTokenVerifier(issuer: TestSigner.issuer, clientID: TestSigner.clientID, nonce: nonce)
        return try verifier.verify(signer.token(alg: "ES256", kid: "ec-1", claims: claims), keys: signer.keySet(), now: now)
    }

    @Test func aTokenCarryingTheSignInsNonceIsAccepted() throws {
        let claims = TestSigner.claims(now: now) { $0["nonce"] = "n-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG" }
        #expect(try verify(claims, nonce: nonce).subject == "user-42")
    }

    @Test func aTokenWithoutANonceIsRefusedWhenTheSignInSentOne() {
        #expect(oidcErrorCode { _ = try verify(TestSigner.claims(now: now), nonce: nonce) } == .wrongNonce)
    }

    @Test(arguments: ["n-0123456789abcdefghijklmnopqrstuvwxyzABCDEFH", "n-0123456789", ""])
    func aTokenWithAnotherNonceIsRefused(_ other: String) {
        let claims = TestSigner.claims(now: now) { $0["nonce"] = .string(other) }
        #expect(oidcErrorCode { _ = try verify(claims, nonce: nonce) } == .wrongNonce)
    }

    @Test func aNonceThatIsNotAStringIsRefused() {
        let claims = TestSigner.claims(now: now) { $0["nonce"] = .array(["n-0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"]) }
        #expect(oidcErrorCode { _ = try verify(claims, nonce: nonce) } == .wrongNonce)
    }

    @Test func theRefusalNamesNeitherNonce() {
        let claims = TestSigner.claims(now: now) { $0["nonce"] = "attacker-nonce-value" }
        do {
            _ = try verify(claims, nonce: nonce)
            Issue.record("accepted")
        } catch {
            let text = String(describing: error)
            #expect(!text.contains("attacker-nonce-value") && !text.contains("n-0123456789"), "\(text)")
        }
    }

    @Test func withoutASignInTheNonceIsNotAskedFor() throws {
        // A saved answer or a refresh (Core §12.2 lets a refreshed id token omit it).
        #expect(try verify(TestSigner.claims(now: now), nonce: nil).subject == "user-42")
    }
}
