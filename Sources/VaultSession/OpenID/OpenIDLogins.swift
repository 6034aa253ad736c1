import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import VaultCore
import VaultCrypto

/// OpenID Connect logins, for the manager's refreshes and for its sign-ins alike: endpoints from
/// discovery at sign-in, and the id token verified at sign-in and after every refresh; the login's
/// user id is the verified `sub`. Without a verifier (``SessionManager/useOpenID(_:)``) `oidc`
/// logins are refused.
final class OpenIDLogins: Sendable {
    private let verifier = Locked<(any OpenIDVerifier)?>(nil)
    private let logger: Logger

    init(logger: Logger) {
        self.logger = logger
    }

    func use(_ verifier: any OpenIDVerifier) {
        self.verifier.withLock { $0 = verifier }
    }

    private var openID: (any OpenIDVerifier)? { verifier.withLock { $0 } }

    /// The provider for `settings` and where a browser sign-in with it starts (`oauth2`: the
    /// settings' authorization endpoint; `oidc`: the discovery document's; nil when neither names one).
    func resolvedProvider(_ settings: ProviderSettings) async throws
        -> (provider: OAuthProvider, authorization: URL?, deviceAuthorization: URL?) {
        guard settings.kind == .oidc else {
            return (try settings.resolved(), settings.authorizationEndpoint, settings.deviceAuthorizationEndpoint)
        }
        try settings.checkOnlyNeeded()
        guard let openID else { throw VaultError(.unavailable, "OpenID Connect logins are not available in this process") }
        guard let issuer = settings.issuer else { throw VaultError.invalidArgument("an oidc provider needs its issuer URL") }
        guard let clientID = settings.clientID else { throw VaultError.invalidArgument("an oidc provider needs its client id") }
        let endpoints: OpenIDEndpoints
        do {
            endpoints = try await openID.endpoints(of: issuer)
        } catch {
            throw Self.saveError(error, what: "the issuer's discovery document")
        }
        let provider = try OAuthProvider.oidc(issuer: issuer, tokenEndpoint: endpoints.token, revocationEndpoint: endpoints.revocation,
                                              clientID: clientID, clientSecret: settings.clientSecret,
                                              clientAuthentication: settings.clientAuthentication)
        return (provider, endpoints.authorization, endpoints.deviceAuthorization)
    }

    /// The sign-in answer with its verified `sub` as the user id; refuses one whose id token fails.
    /// `nonce`: the one a sign-in the manager began sent, which the id token must carry.
    func verifiedSignIn(_ response: TokenResponse, provider: OAuthProvider, nonce: SecureBytes? = nil) async throws -> TokenResponse {
        guard provider.kind == .oidc, let issuer = provider.issuer else { return response }
        guard let openID else { throw VaultError(.unavailable, "OpenID Connect logins are not available in this process") }
        guard let idToken = response.idToken else {
            throw VaultError.invalidArgument("an OpenID Connect sign-in answer must carry an id_token (ask for the openid scope); nothing was stored")
        }
        var verified = response
        do {
            verified.userID = try await openID.verifiedSubject(of: idToken, issuer: issuer, clientID: provider.clientID, nonce: nonce)
        } catch {
            throw Self.saveError(error, what: "the id token")
        }
        if let subject = verified.userID { try ProviderChosenName.check(subject, what: "the id token's `sub`") }
        return verified
    }

    /// A refresh answer of an `oidc` login, with a new id token verified (a refresh may omit it:
    /// OpenID Connect Core §12.2). A refused token is ProviderRejected (nothing stored or deleted).
    /// When the keys cannot be fetched (a key rotation during an outage), the new id token is
    /// dropped, never stored unverified, and the rest is kept: the provider may have rotated the
    /// refresh token, and losing it would end the login.
    func verified(_ answer: RefreshAnswer, for session: LoginSession) async -> RefreshAnswer {
        guard session.provider.kind == .oidc, case .tokens(var response) = answer,
              let idToken = response.idToken, let issuer = session.provider.issuer else { return answer }
        guard let openID else { return .rejected(error: "oidc_unavailable", description: "OpenID Connect is not available in this process") }
        do {
            let subject = try await openID.verifiedSubject(of: idToken, issuer: issuer, clientID: session.provider.clientID, nonce: nil)
            if ProviderChosenName.isHiddenName(subject) {
                return .rejected(error: "invalid_id_token", description: "the refreshed id token's `sub` holds control, format or separator characters")
            }
            if let known = session.userID, known != subject {
                return .rejected(error: "invalid_id_token", description: "the refreshed id token is for another user (sub changed)")
            }
            response.userID = subject
            return .tokens(response)
        } catch {
            switch error {
            case .unreachable(let reason):
                logger.notice("a refreshed id token could not be verified now; it was dropped, the previous one is kept",
                              metadata: ["reason": "\(reason)"])
                response.idToken = nil
                response.userID = nil
                return .tokens(response)
            case .refused(let reason): return .rejected(error: "invalid_id_token", description: reason)
            }
        }
    }

    static func saveError(_ error: OpenIDVerificationError, what: String) -> VaultError {
        switch error {
        case .unreachable(let reason):
            return VaultError(.unavailable, "\(what) could not be checked: \(reason); nothing was stored, try again")
        case .refused(let reason):
            return VaultError.invalidArgument("\(what) was refused: \(reason); nothing was stored, sign in again")
        }
    }
}
