import BoundedJSON
import Foundation
import Testing
import TestSupport
import VaultCore
import VaultCrypto
import VaultOAuthHTTP
import VaultTesting
@testable import VaultOIDC

/// Id tokens from a real OpenID provider (django-oauth-toolkit with OIDC, started on 127.0.0.1),
/// fetched and verified through the real fetcher and the provider cache.
@Suite(.serialized, .timeLimit(.minutes(20))) struct RealProviderTests {
    /// One provider and a cache over the real fetcher, on a clock that follows the real time plus
    /// what the test moved it by: the provider stamps its tokens with the real time, so a "now" taken
    /// once (before the provider started, say) lies before the tokens a loaded machine issues later.
    /// The key-set refetch interval is ten minutes, not one, so that the real time a loaded machine
    /// spends between two of a test's requests never reaches it by itself.
    final class World: @unchecked Sendable {
        let provider: OAuthTestProvider
        let clock = RealTimeOffsetClock()
        let cache: OIDCProviderCache

        init(fetcher: HTTPDocumentFetcher = HTTPDocumentFetcher()) throws {
            provider = try OAuthTestProvider()
            cache = OIDCProviderCache(fetcher: fetcher, clock: clock, keyRefetchInterval: 600)
        }

        func verify(_ token: SecureBytes, clientID: String = OAuthTestProvider.clientID) async throws -> VerifiedIDToken {
            try await cache.verifyIDToken(token, issuer: provider.issuer, clientID: clientID)
        }
    }

    @Test func anIDTokenFromTheProviderIsAcceptedAndGivesItsSubject() async throws {
        let world = try World()
        let verified = try await world.verify(try await world.provider.idToken())
        #expect(verified.subject == world.provider.userSubject)
        #expect(verified.issuer == world.provider.issuer)
        #expect(verified.audiences == [OAuthTestProvider.clientID])
        #expect(verified.expiresAt > world.clock.now)
        let discovery = try await world.cache.discovery(for: world.provider.issuer)
        #expect(discovery.tokenEndpoint == world.provider.tokenEndpoint)
        #expect(discovery.revocationEndpoint == world.provider.revocationEndpoint)
        // A second token needs no further request: both documents are cached.
        _ = try await world.verify(try await world.provider.idToken())
        #expect(try await world.provider.documentRequests() == (1, 1))
    }

    @Test func theIDTokenOfARefreshIsAcceptedToo() async throws {
        let world = try World()
        let refreshToken = try #require(try await world.provider.signInWithOpenID().jsonField("refresh_token"))
        let (status, body) = try await world.provider.post("/o/token/", form: ["grant_type": "refresh_token", "refresh_token": refreshToken])
        #expect(status == 200)
        let idToken = try #require(body.jsonField("id_token"))
        #expect(try await world.verify(SecureBytes(copying: Array(idToken.utf8))).subject == world.provider.userSubject)
    }

    @Test func aFlippedSignatureByteIsABadSignature() async throws {
        let world = try World()
        var bytes = try await world.provider.idToken().withUnsafeBytes { Array($0) }
        let index = bytes.count - 10  // inside the signature; stays valid base64url
        bytes[index] = bytes[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let code = await oidcErrorCode { _ = try await world.verify(SecureBytes(copying: bytes)) }
        #expect(code == .badSignature)
    }

    @Test func aTokenIssuedToAnotherClientIsWrongAudience() async throws {
        let world = try World()
        let token = try await world.provider.idToken(client: (OAuthTestProvider.otherClientID, OAuthTestProvider.otherClientSecret))
        #expect(await oidcErrorCode { _ = try await world.verify(token) } == .wrongAudience)
        #expect(try await world.verify(token, clientID: OAuthTestProvider.otherClientID).subject == world.provider.userSubject)
    }

    @Test func aTokenCheckedAgainstAnotherIssuerIsWrongIssuer() async throws {
        let world = try World()
        let keys = try await world.cache.keySet(for: world.provider.issuer)
        let elsewhere = IDTokenVerifier(issuer: URL(string: world.provider.base + "/other")!, clientID: OAuthTestProvider.clientID)
        let token = try await world.provider.idToken()
        #expect(oidcErrorCode { _ = try elsewhere.verify(token, keys: keys, now: world.clock.now) } == .wrongIssuer)
    }

    @Test func aTokenPastItsExpiryIsExpired() async throws {
        let world = try World()
        let token = try await world.provider.idToken()
        let verified = try await world.verify(token)
        world.clock.set(to: verified.expiresAt.addingTimeInterval(IDTokenVerifier.defaultLeeway + 1))
        #expect(await oidcErrorCode { _ = try await world.verify(token) } == .expired)
    }

    @Test func aKeyRotationIsFollowedWithOneRefetchAndAFloodOfUnknownKeysCausesNone() async throws {
        let world = try World()
        _ = try await world.verify(try await world.provider.idToken())
        try await world.provider.rotateSigningKey()
        let rotated = try await world.provider.idToken()
        world.clock.advance(by: world.cache.keyRefetchInterval)
        #expect(try await world.verify(rotated).subject == world.provider.userSubject)
        #expect(try await world.provider.documentRequests().keys == 2)
        // Tokens naming made-up key ids: refused, and the key set is not fetched again.
        let parts = rotated.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }.split(separator: ".").map(String.init)
        for n in 0..<20 {
            let header = Base64URL.encode(Array(#"{"alg":"RS256","kid":"made-up-\#(n)"}"#.utf8))
            let forged = SecureBytes(copying: Array((header + "." + parts[1] + "." + parts[2]).utf8))
            #expect(await oidcErrorCode { _ = try await world.verify(forged) } == .unknownKey)
        }
        #expect(try await world.provider.documentRequests().keys == 2)
        // The old key stays published (inactive), so tokens it signed before still verify.
        world.clock.advance(by: 1)
        #expect(try await world.verify(rotated).subject == world.provider.userSubject)
    }

    @Test func aRotatedKeyIsNotRefetchedBeforeTheIntervalButIsAfterIt() async throws {
        let world = try World()
        _ = try await world.verify(try await world.provider.idToken())
        try await world.provider.rotateSigningKey()
        let rotated = try await world.provider.idToken()
        #expect(await oidcErrorCode { _ = try await world.verify(rotated) } == .unknownKey)
        #expect(try await world.provider.documentRequests().keys == 1)
        world.clock.advance(by: world.cache.keyRefetchInterval)
        #expect(try await world.verify(rotated).subject == world.provider.userSubject)
        #expect(try await world.provider.documentRequests().keys == 2)
    }

    @Test func concurrentVerificationsOnAnEmptyCacheShareOneFetchOfEachDocument() async throws {
        let world = try World()
        let token = try await world.provider.idToken()
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<20 { group.addTask { try await world.verify(token).subject } }
            for try await subject in group { #expect(subject == world.provider.userSubject) }
        }
        #expect(try await world.provider.documentRequests() == (1, 1))
    }

    @Test func aDiscoveryDocumentNamingAnotherIssuerIsRefused() async throws {
        let world = try World()
        try await world.provider.control("/test/oidc", ["discovery_issuer": "https://evil.example"])
        let token = try await world.provider.idToken()
        #expect(await oidcErrorCode { _ = try await world.verify(token) } == .issuerMismatch)
    }

    @Test func aDiscoveryDocumentOverTheCapIsRefusedByTheFetcher() async throws {
        let world = try World()
        try await world.provider.control("/test/oidc", ["discovery_padding": .int(Int64(OIDCProviderCache.maximumDocumentBytes))])
        let code = await oidcErrorCode { _ = try await world.cache.discovery(for: world.provider.issuer) }
        #expect(code == .malformedDocument)
    }

    @Test func theFetcherDoesNotFollowRedirectsAndAMissingDiscoveryDocumentIsNotTransient() async throws {
        let world = try World()
        // Django's CommonMiddleware answers /o/userinfo with a 301 to /o/userinfo/.
        let (status, _) = try await HTTPDocumentFetcher().fetch(URL(string: world.provider.base + "/o/userinfo")!)
        #expect(status == 301)
        // No discovery document under that issuer: HTTP 404, a configuration error, not "offline".
        let elsewhere = URL(string: world.provider.base + "/elsewhere")!
        let code = await oidcErrorCode { _ = try await world.cache.discovery(for: elsewhere) }
        #expect(code == .malformedDocument)
        #expect(code?.isTransient == false)
    }

    @Test func aProviderThatDoesNotAnswerInTimeIsUnreachableAndTransient() async throws {
        let world = try World(fetcher: HTTPDocumentFetcher(deadline: .milliseconds(300)))
        try await world.provider.control("/test/oidc", ["discovery_delay": 5])
        let started = ContinuousClock.now
        let code = await oidcErrorCode { _ = try await world.cache.discovery(for: world.provider.issuer) }
        #expect(code == .discoveryUnreachable)
        #expect(code?.isTransient == true)
        // Cut off at the 300 ms deadline, not after the provider's 5 s delay.
        #expect(ContinuousClock.now - started < .seconds(5) - .milliseconds(500), "waited \(ContinuousClock.now - started)")
    }

    @Test func aStoppedProviderIsUnreachableAndTheCachedKeysStillServe() async throws {
        let world = try World()
        let token = try await world.provider.idToken()
        _ = try await world.verify(token)
        world.provider.stop()
        #expect(try await world.verify(token).subject == world.provider.userSubject)
        world.clock.advance(by: world.cache.maximumAge)
        let code = await oidcErrorCode { _ = try await world.verify(token) }
        #expect(code == .discoveryUnreachable)
    }
}

/// The real time moved by what a test advanced it by: for tests against a real provider, whose tokens
/// carry the real time of their issue.
final class RealTimeOffsetClock: VaultClock, @unchecked Sendable {
    private let offset = Locked<TimeInterval>(0)

    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(by seconds: TimeInterval) { offset.withLock { $0 += seconds } }

    /// Moves the clock to `date`; from then on it runs with the real time.
    func set(to date: Date) { offset.withLock { $0 = date.timeIntervalSince(Date()) } }
}
