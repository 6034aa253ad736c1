import BoundedJSON
import Foundation
import Testing
import VaultCrypto
@testable import VaultOIDC

/// The verifier on tokens and keys made here with swift-crypto (ES256 and RS256), for every refusal
/// the real provider cannot be made to produce.
@Suite(.timeLimit(.minutes(20))) struct IDTokenVerifierTests {
    let signer = TestSigner()
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let verifier = IDTokenVerifier(issuer: TestSigner.issuer, clientID: TestSigner.clientID)

    func verify(_ token: SecureBytes) throws -> VerifiedIDToken {
        try verifier.verify(token, keys: signer.keySet(), now: now)
    }

    @Test func anES256TokenSignedByTheProvidersP256KeyIsAccepted() throws {
        let verified = try verify(signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now)))
        #expect(verified.subject == "user-42")
        #expect(verified.issuer == TestSigner.issuer)
        #expect(verified.audiences == ["sorted-app"])
        #expect(verified.expiresAt == now.addingTimeInterval(600))
        #expect(verified.issuedAt == now)
    }

    @Test func anRS256TokenSignedByTheProvidersRSAKeyIsAccepted() throws {
        #expect(try verify(signer.token(alg: "RS256", kid: "rsa-1", claims: TestSigner.claims(now: now))).subject == "user-42")
    }

    @Test func anES256TokenSignedByAnotherP256KeyHasABadSignature() {
        let stranger = TestSigner()
        let token = stranger.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .badSignature)
    }

    @Test func alteredClaimsBreakTheSignature() {
        let token = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now))
        var parts = token.text.split(separator: ".").map(String.init)
        let forged = TestSigner.claims(now: now) { $0["sub"] = "admin" }
        parts[1] = Base64URL.encode(JSONValue.object(forged).serialized())
        #expect(oidcErrorCode { _ = try verify(SecureBytes(text: parts.joined(separator: "."))) } == .badSignature)
    }

    @Test func algNoneIsRefusedEvenWithoutASignature() {
        let token = signer.token(alg: "none", kid: "rsa-1", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .unsupportedAlgorithm)
    }

    @Test func hs256WithTheRSAPublicKeyAsSecretIsRefused() {
        let token = signer.token(alg: "HS256", kid: "rsa-1", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .unsupportedAlgorithm)
    }

    @Test func anES256TokenNamingTheRSAKeyIsRefused() {
        let token = signer.token(alg: "ES256", kid: "rsa-1", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .unsupportedAlgorithm)
    }

    @Test func anRSAAndAnECKeyUnderOneKeyIDEachVerifyTheirOwnAlgorithm() throws {
        var keys = try JSONValue.parse(signer.keySetJSON())["keys"]!.arrayValue!
        keys = keys.map { key in
            var members = key.objectValue!
            members["kid"] = "shared"
            return .object(members)
        }
        let shared = try JSONWebKeySet(parsing: JSONValue.object(["keys": .array(keys)]).serialized(), from: URL(string: "https://id.sorted.example/jwks")!)
        for alg in ["ES256", "RS256"] {
            let token = signer.token(alg: alg, kid: "shared", claims: TestSigner.claims(now: now))
            #expect(try verifier.verify(token, keys: shared, now: now).subject == "user-42", "\(alg)")
        }
    }

    @Test func otherAlgorithmsSuchAsRS384OrPS256AreRefused() {
        for alg in ["RS384", "PS256", "ES384", "EdDSA", "rs256"] {
            let token = signer.token(alg: alg, kid: "rsa-1", claims: TestSigner.claims(now: now))
            #expect(oidcErrorCode { _ = try verify(token) } == .unsupportedAlgorithm, "\(alg)")
        }
    }

    @Test func aVerifierNarrowedToRS256RefusesAnES256Token() throws {
        let rsaOnly = IDTokenVerifier(issuer: TestSigner.issuer, clientID: TestSigner.clientID, algorithms: [.rs256])
        let es256 = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try rsaOnly.verify(es256, keys: signer.keySet(), now: now) } == .unsupportedAlgorithm)
        let rs256 = signer.token(alg: "RS256", kid: "rsa-1", claims: TestSigner.claims(now: now))
        #expect(try rsaOnly.verify(rs256, keys: signer.keySet(), now: now).subject == "user-42")
    }

    @Test func anUnknownKeyIDIsAnUnknownKey() {
        let token = signer.token(alg: "ES256", kid: "ec-2", claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .unknownKey)
    }

    @Test func aTokenWithoutKeyIDUsesTheOnlyKeyAndIsRefusedWhenThereAreSeveral() throws {
        let token = signer.token(alg: "ES256", kid: nil, claims: TestSigner.claims(now: now))
        #expect(oidcErrorCode { _ = try verify(token) } == .unknownKey)
        let onlyEC = signer.keySet(only: "ec-1")
        #expect(onlyEC.keys.count == 1)
        #expect(try verifier.verify(token, keys: onlyEC, now: now).subject == "user-42")
    }

    @Test func aTokenForAnotherIssuerIsWrongIssuer() {
        let token = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0["iss"] = "https://id.sorted.example/" })
        #expect(oidcErrorCode { _ = try verify(token) } == .wrongIssuer)
    }

    @Test func audienceMustNameThisClientAndSeveralAudiencesNeedAMatchingAzp() throws {
        func code(_ edit: @escaping (inout [String: JSONValue]) -> Void) -> OIDCError.Code? {
            oidcErrorCode { _ = try verify(signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now, edit))) }
        }
        #expect(code { $0["aud"] = "another-app" } == .wrongAudience)
        #expect(code { $0["aud"] = ["another-app", "third"] } == .wrongAudience)
        #expect(code { $0["aud"] = ["sorted-app", "another-app"] } == .wrongAudience)  // no azp
        #expect(code { $0["aud"] = ["sorted-app", "another-app"]; $0["azp"] = "another-app" } == .wrongAudience)
        #expect(code { $0["azp"] = "another-app" } == .wrongAudience)
        #expect(code { $0["aud"] = ["sorted-app", "another-app"]; $0["azp"] = "sorted-app" } == nil)
        #expect(code { $0["aud"] = ["sorted-app"] } == nil)
        #expect(code { $0["aud"] = 7 } == .malformedToken)
    }

    @Test func aTokenPastItsExpiryBeyondTheLeewayIsExpired() {
        let token = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now))
        #expect(throws: Never.self) { try verifier.verify(token, keys: signer.keySet(), now: now.addingTimeInterval(600 + 59)) }
        #expect(oidcErrorCode { _ = try verifier.verify(token, keys: signer.keySet(), now: now.addingTimeInterval(600 + 61)) } == .expired)
    }

    @Test func iatOrNbfInTheFutureIsNotYetValid() {
        for claim in ["iat", "nbf"] {
            let token = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0[claim] = .int(1_800_000_000 + 300) })
            #expect(oidcErrorCode { _ = try verify(token) } == .notYetValid, "\(claim)")
        }
    }

    @Test func missingOrOddClaimsAreMalformed() {
        for edit: (inout [String: JSONValue]) -> Void in [
            { $0["sub"] = nil }, { $0["sub"] = "" }, { $0["sub"] = "a\u{1}b" }, { $0["exp"] = nil }, { $0["iat"] = nil },
            { $0["exp"] = "soon" }, { $0["nbf"] = "later" }, { $0["aud"] = [] },
        ] {
            let token = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now, edit))
            #expect(oidcErrorCode { _ = try verify(token) } == .malformedToken)
        }
    }

    @Test func tokensThatAreNotStrictCompactJWSAreMalformed() {
        let good = signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now)).text
        let parts = good.split(separator: ".").map(String.init)
        for text in [
            "", "abc", parts[0] + "." + parts[1], good + ".x.y",          // part counts (5 parts: JWE)
            parts[0] + "=." + parts[1] + "." + parts[2],                  // padding
            parts[0] + "." + parts[1] + "." + parts[2] + " ",             // whitespace
            Base64URL.encode(Array("[1]".utf8)) + "." + parts[1] + "." + parts[2],  // header not an object
            Base64URL.encode(Array(#"{"alg":"ES256","kid":"ec-1","crit":["b64"]}"#.utf8)) + "." + parts[1] + "." + parts[2],
        ] {
            #expect(oidcErrorCode { _ = try verify(SecureBytes(text: text)) } == .malformedToken, "\(text.prefix(20))")
        }
    }

    @Test func aTokenOverTheSizeCapIsRefusedBeforeParsing() {
        let huge = SecureBytes(copying: [UInt8](repeating: UInt8(ascii: "A"), count: IDTokenVerifier.maximumTokenBytes + 1))
        #expect(oidcErrorCode { _ = try verify(huge) } == .malformedToken)
    }

    @Test func noErrorTextQuotesAnyPartOfTheToken() {
        let stranger = TestSigner()
        let tokens = [
            signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0["aud"] = "x" }),
            signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0["iss"] = "https://x.example" }),
            signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0["exp"] = 1 }),
            signer.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now) { $0["sub"] = nil }),
            stranger.token(alg: "ES256", kid: "ec-1", claims: TestSigner.claims(now: now)),
            signer.token(alg: "HS256", kid: "rsa-1", claims: TestSigner.claims(now: now)),
            signer.token(alg: "ES256", kid: "nope", claims: TestSigner.claims(now: now)),
        ]
        for token in tokens {
            do {
                _ = try verify(token)
                Issue.record("accepted")
            } catch {
                let text = "\(error) \(String(reflecting: error))"
                for part in token.text.split(separator: ".") where part.count > 8 { #expect(!text.contains(part)) }
            }
        }
    }
}
