import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// Checks an OpenID Connect id token (OpenID Connect Core §3.1.3.7) against a provider's keys:
/// signature first, then `iss`, `aud`/`azp`, `exp`, `iat`, `nbf` and, for a token answered to a
/// sign-in the vault began, `nonce`.
///
/// ```swift
/// let verifier = IDTokenVerifier(issuer: issuer, clientID: "sorted-app")
/// let token = try verifier.verify(idToken, keys: keys, now: clock.now)
/// ```
///
/// Only RS256 and ES256 are accepted, and only with a key of the matching type: `none`, `HS256`
/// (which would treat a public key as a shared secret) and every other algorithm are refused before
/// a key is looked at. The token is a bearer secret, so it is taken as `SecureBytes` and no error
/// quotes it. Most callers use ``OIDCProviderCache/verifyIDToken(_:issuer:clientID:)``, which
/// fetches the keys and follows key rotation.
public struct IDTokenVerifier: Sendable {
    /// The longest id token accepted, in bytes.
    public static let maximumTokenBytes = 16 * 1024
    /// The clock difference tolerated on `exp`, `iat` and `nbf`, in seconds.
    public static let defaultLeeway: TimeInterval = 60

    public let issuer: URL
    public let clientID: String
    /// Seconds of clock difference tolerated, 0 to 300.
    public let leeway: TimeInterval
    /// The algorithms accepted: RS256 and ES256, or fewer when the provider announces fewer.
    public let algorithms: Set<JWSAlgorithm>
    /// The nonce the sign-in sent (OpenID Connect Core §3.1.2.1): when set, the token must carry
    /// exactly it, so a token minted for another sign-in cannot be replayed into this one. Nil for
    /// tokens with no sign-in of ours behind them (a saved answer, a refresh: §12.2 lets those omit it).
    public let nonce: SecureBytes?

    /// - Parameters:
    ///   - algorithms: narrow the accepted algorithms, e.g. to what the discovery document lists in
    ///     `id_token_signing_alg_values_supported`; nothing outside RS256 and ES256 can be added.
    ///   - nonce: the nonce of the sign-in this token answers; the token must carry exactly it.
    public init(issuer: URL, clientID: String, leeway: TimeInterval = defaultLeeway,
                algorithms: Set<JWSAlgorithm> = Set(JWSAlgorithm.allCases), nonce: SecureBytes? = nil) {
        self.nonce = nonce
        self.issuer = issuer
        self.clientID = clientID
        self.leeway = max(0, min(leeway, 300))
        self.algorithms = algorithms
    }

    /// The verified claims, or an ``OIDCError`` saying which check failed.
    public func verify(_ idToken: SecureBytes, keys: JSONWebKeySet, now: Date) throws(OIDCError) -> VerifiedIDToken {
        var jws = try CompactJWS(idToken)
        defer { jws.wipe() }
        guard let algorithm = JWSAlgorithm(rawValue: jws.algorithmName), algorithms.contains(algorithm) else {
            let accepted = algorithms.map(\.rawValue).sorted().joined(separator: " or ")
            throw OIDCError(.unsupportedAlgorithm, "the id token is signed with \(Self.quoted(jws.algorithmName)); only \(accepted.isEmpty ? "RS256 or ES256 (none announced by the provider)" : accepted) is accepted: configure the provider to sign id tokens with RS256")
        }
        let candidates = keys.candidates(for: jws.keyID)
        guard let named = candidates.first else {
            let which = jws.keyID.map { "key \(Self.quoted($0))" } ?? "no key id, and the provider publishes \(keys.keys.count) keys"
            throw OIDCError(.unknownKey, "the id token names \(which), which is not in the provider's key set of \(issuer.absoluteString): sign in again; if it persists, the token is not from this provider")
        }
        // The key's type (and its own `alg`, if any) must fit the token's `alg`: never RS256 with an EC key.
        guard let key = candidates.first(where: { $0.signingAlgorithm == algorithm && ($0.algorithm ?? algorithm.rawValue) == algorithm.rawValue }) else {
            throw OIDCError(.unsupportedAlgorithm, "the id token says \(algorithm.rawValue) but its key is for \(named.signingAlgorithm.rawValue): the token is not from this provider; sign in again")
        }
        guard key.isValidSignature(jws.signature, over: jws.signingInput, algorithm: algorithm) else {
            throw OIDCError(.badSignature, "the id token's signature does not verify with the key of \(issuer.absoluteString): it is damaged or forged; sign in again")
        }
        return try checkClaims(jws.payload, now: now)
    }

    /// The claims checks, on a payload whose signature has been verified.
    func checkClaims(_ payload: [UInt8], now: Date) throws(OIDCError) -> VerifiedIDToken {
        guard let claims = (try? JSONValue.parse(payload, maxDepth: 16))?.objectValue else {
            throw .malformedToken("its payload is not a JSON object")
        }
        guard let iss = claims["iss"]?.stringValue, Array(iss.utf8) == Array(issuer.absoluteString.utf8) else {
            throw OIDCError(.wrongIssuer, "the id token was issued by \(Self.quoted(claims["iss"]?.stringValue ?? "nobody")), not \(issuer.absoluteString): check the issuer URL saved with the login")
        }
        let audiences: [String]
        switch claims["aud"] {
        case .string(let one): audiences = [one]
        case .array(let many) where !many.isEmpty && many.count <= 64 && many.allSatisfy({ $0.stringValue != nil }):
            audiences = many.compactMap(\.stringValue)
        default: throw .malformedToken("its `aud` is not a string or a list of strings")
        }
        let clientBytes = Array(clientID.utf8)
        let azp = claims["azp"]?.stringValue
        // Several audiences need `azp` naming this client; a present `azp` must name it anyway.
        let isAudience = audiences.contains { Array($0.utf8) == clientBytes }
        let isAuthorizedParty = azp.map { Array($0.utf8) == clientBytes } ?? (audiences.count == 1)
        guard isAudience && isAuthorizedParty else {
            throw OIDCError(.wrongAudience, "the id token was issued to another client than \(Self.quoted(clientID)): check the client id saved with the login")
        }
        guard let exp = Self.time(claims["exp"]), let iat = Self.time(claims["iat"]) else {
            throw .malformedToken("it lacks a numeric `exp` or `iat`")
        }
        guard let sub = claims["sub"]?.stringValue, !sub.isEmpty, sub.utf8.count <= 255, sub.utf8.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw .malformedToken("its `sub` is missing, longer than 255 bytes or has control characters")
        }
        guard now.timeIntervalSince(exp) < leeway else {
            throw OIDCError(.expired, "the id token expired at \(Self.format(exp)) (now \(Self.format(now))): sign in again, or check this machine's clock")
        }
        if let nonce {
            // Compared in constant time: the nonce is the sign-in's secret until the token comes back.
            guard case .string(let carried)? = claims["nonce"], nonce.constantTimeEquals(Array(carried.utf8)) else {
                let what = claims["nonce"] == nil ? "carries no nonce" : "carries another nonce than the sign-in sent"
                throw OIDCError(.wrongNonce, "the id token \(what): it was not issued for this sign-in (a replayed or injected token); sign in again")
            }
        }
        let nbf = claims["nbf"].flatMap(Self.time)
        if claims["nbf"] != nil && nbf == nil { throw .malformedToken("its `nbf` is not a number") }
        for (name, date) in [("iat", iat), ("nbf", nbf)] {
            if let date, date.timeIntervalSince(now) > leeway {
                throw OIDCError(.notYetValid, "the id token's `\(name)` is \(Self.format(date)), later than now (\(Self.format(now))): check this machine's clock")
            }
        }
        return VerifiedIDToken(subject: sub, issuer: issuer, audiences: audiences, expiresAt: exp, issuedAt: iat)
    }

    /// A NumericDate (seconds since 1970, RFC 7519 §2), within a sane range.
    private static func time(_ value: JSONValue?) -> Date? {
        guard let seconds = value?.doubleValue, seconds.isFinite, seconds >= 0, seconds < 1e11 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    private static func format(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A name from the token, quoted and cut short, for an error message (never the token itself).
    private static func quoted(_ text: String) -> String { String(text.prefix(64)).debugDescription }
}
