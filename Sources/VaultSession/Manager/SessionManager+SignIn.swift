import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Sign-ins the manager runs (``SignInFlows``: browser, device and password), and the one save path
/// their answers take. The flows are ``SignInFlows``'; only storing the answer is the manager's.
extension SessionManager {
    /// Begins a sign-in for `owner` (the caller's uid) from `program` (the caller's executable, as
    /// the policy sees it; nil when unknown or in-process): each program of a user has its own cap.
    public func beginSignIn(_ request: SignInRequest, owner: UInt32, program: String? = nil) async throws -> SignInStart {
        try await signIns.begin(request, owner: owner, program: program)
    }

    /// The service of `owner`'s sign-in `id` (for the policy check before completing it), or nil.
    public func signInService(_ id: String, owner: UInt32) -> String? {
        signIns.service(of: id, owner: owner)
    }

    /// Completes `owner`'s sign-in `id` with the redirect's query (a device sign-in: polls until
    /// the provider's answer is final) and stores the login. A callback whose state is not the
    /// sign-in's throws `.callbackMismatch` and leaves the sign-in waiting; anything after the
    /// state matched ends it, stored or not.
    public func completeSignIn(_ id: String, callbackQuery: SecureBytes, owner: UInt32) async throws -> SignInResult {
        let (verified, flow) = try await signIns.complete(id, callbackQuery: callbackQuery, owner: owner)
        return try await storeVerifiedSignIn(verified, flow: flow)
    }

    /// Signs in (or, with `create`, signs up) with an e-mail address and password, and stores the login.
    public func signInWithPassword(_ request: PasswordSignIn) async throws -> SignInResult {
        let (response, provider, key) = try await signIns.password(request)
        let status = try await storeSignIn(response, provider: provider, for: key, maximumLifetime: nil)
        logger.info("signed in", metadata: ["service": "\(logName(request.service))", "kind": "\(provider.kind.rawValue)"])
        return SignInResult(key: key, status: status)
    }

    /// Ends `owner`'s sign-in `id`; false when there was none.
    public func cancelSignIn(_ id: String, owner: UInt32) -> Bool {
        signIns.cancel(id, owner: owner)
    }

    /// Ends every sign-in of `owner` under way whose service `allowed` accepts (the daemon passes
    /// its policy check, so a program ends only sign-ins of services it may sign in to), whichever
    /// program began them; how many ended. Nothing was stored for them.
    public func cancelSignIns(owner: UInt32, where allowed: @Sendable (String) -> Bool) -> Int {
        signIns.cancelAll(owner: owner, where: allowed)
    }

    /// Stores a verified sign-in's answer through the one save path, under the key
    /// ``SignInFlows/key(for:flow:)`` names; a named account's login may be replaced only by its
    /// own user (``SignInFlows/checkNamedAccount(_:stored:verified:)``).
    func storeVerifiedSignIn(_ verified: TokenResponse, flow: PendingSignIn) async throws -> SignInResult {
        let key = try SignInFlows.key(for: verified, flow: flow)
        if flow.account != nil && flow.provider.kind != .oauth2 {
            try SignInFlows.checkNamedAccount(key, stored: try await logins.read(key), verified: verified)
        }
        let status = try await storeSignIn(verified, provider: flow.provider, for: key, maximumLifetime: nil)
        logger.info("signed in", metadata: ["service": "\(logName(flow.service))", "kind": "\(flow.provider.kind.rawValue)"])
        return SignInResult(key: key, status: status)
    }
}
