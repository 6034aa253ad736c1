import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Device sign-ins (RFC 8628): the manager asks the provider for a device code, the user approves
/// it on any device, and the manager polls the token endpoint until the answer is final.
///
/// Why the manager polls rather than its caller: the device code is as good as the tokens once the
/// user approves, so it never leaves this process; and one poller honours `interval` and
/// `slow_down` (+5 s, RFC 8628 §3.5) on the injected sleeper, which tests move by hand. A
/// CompleteLogin waits while it polls; a CancelLogin ends the wait at the next poll.
extension SessionManager {
    func beginDeviceSignIn(_ request: SignInRequest, scopes: [String], owner: UInt32, program: String?) async throws -> SignInStart {
        guard configuration.deviceFlow else {
            throw VaultError.invalidArgument("this daemon's settings turn the device flow off (session.device_flow = false): use the browser or paste flow")
        }
        let (provider, _, endpoint) = try await resolvedProvider(request.settings)
        guard let endpoint else {
            throw VaultError.invalidArgument(request.settings.kind == .oidc
                ? "the issuer's discovery document names no device_authorization_endpoint: this provider offers no device sign-in; use the browser or paste flow"
                : "an oauth2 device sign-in needs the provider's device authorization endpoint")
        }
        try SecureEndpoint.check(endpoint, what: "device authorization endpoint")
        let authorization: DeviceAuthorization
        switch await oauth.authorizeDevice(at: endpoint, scopes: scopes, provider: provider) {
        case .authorization(let answer): authorization = answer
        case .transient(let reason):
            throw VaultError(.unavailable, "the provider could not be reached to begin the device sign-in (\(reason)); try again later")
        case .rejected(let error, let description):
            throw VaultError(.providerRejected, "the provider refused the device sign-in with \(error)\(description.map { ": \($0)" } ?? "")")
        }
        let id = Hex.text(SecureRandom.bytes(count: 16))
        let now = clock.now
        // A device sign-in has no callback: its state and verifier are never sent, only kept so
        // that every pending sign-in has the same shape.
        var flow = PendingSignIn(id: id, owner: owner, program: program, service: request.service, account: request.account, provider: provider,
                                 redirectURI: request.redirectURI, state: SecureBytes(randomCount: 32),
                                 verifier: SecureBytes(randomCount: 32), nonce: nil,
                                 expiresAt: now.addingTimeInterval(min(request.lifetime, authorization.expiresIn)))
        flow.device = DeviceGrant(deviceCode: authorization.deviceCode, interval: authorization.interval)
        try pendingSignIns.add(flow, now: now)
        let code = DeviceCode(userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                              verificationURIComplete: authorization.verificationURIComplete, interval: authorization.interval)
        return SignInStart(flowID: id, authorizationURL: authorization.verificationURIComplete ?? authorization.verificationURI,
                           expiresAt: flow.expiresAt, device: code)
    }

    /// Polls for `owner`'s device sign-in `id` until the provider's answer is final, then stores
    /// the login through the one save path.
    func completeDeviceSignIn(_ id: String, owner: UInt32) async throws -> SignInResult {
        guard var flow = pendingSignIns.find(id, owner: owner, now: clock.now), flow.device != nil else { throw Self.noSignIn }
        guard !flow.polling else {
            throw VaultError(.unavailable, "another CompleteLogin already waits for this device sign-in; wait for it or cancel the sign-in")
        }
        flow.polling = true
        pendingSignIns.update(flow, now: clock.now)
        defer {
            if var left = pendingSignIns.find(id, owner: owner, now: clock.now) {
                left.polling = false
                pendingSignIns.update(left, now: clock.now)
            }
        }
        while true {
            guard let interval = pendingSignIns.find(id, owner: owner, now: clock.now)?.device?.interval else { throw Self.deviceEnded }
            try await Self.sleep(interval, on: sleeper)
            // Cancelled or expired while asleep: the wait ends, nothing was stored.
            guard var current = pendingSignIns.find(id, owner: owner, now: clock.now), let grant = current.device else {
                throw Self.deviceEnded
            }
            switch await oauth.pollDevice(grant.deviceCode, provider: current.provider) {
            case .tokens(let tokens):
                _ = pendingSignIns.take(id, owner: owner, now: clock.now)
                let verified: TokenResponse
                do {
                    verified = try await verifiedSignIn(tokens, provider: current.provider)
                } catch let error as VaultError where error.code == .invalidArgument {
                    throw VaultError(.providerRejected, error.reason)
                }
                return try await storeVerifiedSignIn(verified, flow: current)
            case .rejected("authorization_pending", _):
                continue
            case .rejected("slow_down", _):
                current.device?.interval = min(grant.interval + 5, DeviceAuthorization.maximumInterval)
                pendingSignIns.update(current, now: clock.now)
            case .transient, .lost:
                // RFC 8628 §3.5: no answer, so poll less often before trying again.
                current.device?.interval = min(grant.interval * 2, DeviceAuthorization.maximumInterval)
                pendingSignIns.update(current, now: clock.now)
            case .rejected("expired_token", _):
                _ = pendingSignIns.take(id, owner: owner, now: clock.now)
                throw VaultError(.providerRejected, "the device code expired before the sign-in was approved (expired_token); nothing was stored, sign in again")
            case .rejected("access_denied", _):
                _ = pendingSignIns.take(id, owner: owner, now: clock.now)
                throw VaultError(.providerRejected, "the sign-in was declined at the provider (access_denied); nothing was stored")
            case .invalidGrant:
                _ = pendingSignIns.take(id, owner: owner, now: clock.now)
                throw VaultError(.providerRejected, "the provider refused the device code (invalid_grant: used already or issued to another client); nothing was stored, sign in again")
            case .rejected(let error, let description):
                _ = pendingSignIns.take(id, owner: owner, now: clock.now)
                throw VaultError(.providerRejected, "the provider ended the device sign-in with \(error)\(description.map { ": \($0)" } ?? ""); nothing was stored")
            }
        }
    }

    private static let deviceEnded = VaultError(.providerRejected,
        "the device sign-in ended before it was approved (its code expired, or it was cancelled); nothing was stored, sign in again")
}
