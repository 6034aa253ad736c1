import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// What a verified id token says about the user: signature, issuer, audience and lifetime checked.
///
/// ```swift
/// let token = try verifier.verify(idToken, keys: keys, now: clock.now)
/// let userID = token.subject   // the provider's stable id for the user (`sub`)
/// ```
///
/// Key the login by ``issuer`` and ``subject`` together: `sub` is unique only within one issuer.
/// It holds no part of the token itself.
public struct VerifiedIDToken: Sendable, Equatable {
    /// `sub`: the user's id at the provider, never reassigned (OpenID Connect Core §2).
    public let subject: String
    /// `iss`: equal to the configured issuer.
    public let issuer: URL
    /// `aud`: the clients the token was issued to; contains the configured client id.
    public let audiences: [String]
    /// `exp`.
    public let expiresAt: Date
    /// `iat`.
    public let issuedAt: Date

    public init(subject: String, issuer: URL, audiences: [String], expiresAt: Date, issuedAt: Date) {
        self.subject = subject
        self.issuer = issuer
        self.audiences = audiences
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }
}
