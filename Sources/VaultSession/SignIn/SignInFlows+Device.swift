import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Device sign-ins (RFC 8628): the vault asks the provider for a device code, the user approves
/// it on any device, and the vault polls the token endpoint until the answer is final.
///
/// Why the vault polls rather than its caller: the device code is as good as the tokens once the
/// user approves, so it never leaves this process; and one poller honours `interval` and
/// `slow_down` (+5 s, RFC 8628 §3.5) on the injected sleeper, which tests move by hand. A
/// CompleteLogin waits while it polls; a CancelLogin ends the wait at the next poll.
extension SignInFlows {
    func beginDevice(_ request: SignInRequest, scopes: [String], owner: UInt32, program: String?) async throws -> SignInStart {
        guard deviceFlow else {
            throw VaultError.invalidArgument("this daemon's settings turn the device flow off (session.device_flow = false): use the browser or paste flow")
        }
        let (provider, _, endpoint) = try await openID.resolvedProvider(request.settings)
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
        try add(flow)
        let code = DeviceCode(userCode: authorization.userCode, verificationURI: authorization.verificationURI,
                              verificationURIComplete: authorization.verificationURIComplete, interval: authorization.interval)
        return SignInStart(flowID: id, authorizationURL: authorization.verificationURIComplete ?? authorization.verificationURI,
                           expiresAt: flow.expiresAt, device: code)
    }

    /// Polls for `owner`'s device sign-in `id` until the provider's answer is final; the manager
    /// stores it through the one save path.
    func completeDevice(_ id: String, owner: UInt32) async throws -> Verified {
        try startPolling(id, owner: owner)
        defer { stopPolling(id, owner: owner) }
        while true {
            guard let interval = find(id, owner: owner)?.device?.interval else { throw Self.deviceEnded }
            try await sleeper.sleep(seconds: interval)
            // Cancelled or expired while asleep: the wait ends, nothing was stored.
            guard var current = find(id, owner: owner), let grant = current.device else { throw Self.deviceEnded }
            let answer = await oauth.pollDevice(grant.deviceCode, provider: current.provider)
            switch answer {
            case .tokens(let tokens):
                _ = take(id, owner: owner)
                do {
                    return (try await openID.verifiedSignIn(tokens, provider: current.provider), current)
                } catch let error as VaultError where error.code == .invalidArgument {
                    throw VaultError(.providerRejected, error.reason)
                }
            case .rejected("authorization_pending", _):
                continue
            case .rejected("slow_down", _):
                current.device?.interval = min(grant.interval + 5, DeviceAuthorization.maximumInterval)
                update(current)
            case .transient, .lost:
                // RFC 8628 §3.5: no answer, so poll less often before trying again.
                current.device?.interval = min(grant.interval * 2, DeviceAuthorization.maximumInterval)
                update(current)
            case .invalidGrant, .rejected:
                _ = take(id, owner: owner)
                throw Self.deviceRefusal(answer)
            }
        }
    }

    /// Marks the sign-in as polled, refusing a second poller: one check and one change under the lock.
    private func startPolling(_ id: String, owner: UInt32) throws {
        let now = clock.now
        try pending.withLock { (table: inout PendingSignIns) throws -> Void in
            guard var flow = table.find(id, owner: owner, now: now), flow.device != nil else { throw Self.noSignIn }
            guard !flow.polling else {
                throw VaultError(.unavailable, "another CompleteLogin already waits for this device sign-in; wait for it or cancel the sign-in")
            }
            flow.polling = true
            table.update(flow, now: now)
        }
    }

    private func stopPolling(_ id: String, owner: UInt32) {
        guard var left = find(id, owner: owner) else { return }
        left.polling = false
        update(left)
    }

    /// The error a final refusal of the device code reads as.
    private static func deviceRefusal(_ answer: RefreshAnswer) -> VaultError {
        switch answer {
        case .rejected("expired_token", _):
            VaultError(.providerRejected, "the device code expired before the sign-in was approved (expired_token); nothing was stored, sign in again")
        case .rejected("access_denied", _):
            VaultError(.providerRejected, "the sign-in was declined at the provider (access_denied); nothing was stored")
        case .rejected(let error, let description):
            VaultError(.providerRejected, "the provider ended the device sign-in with \(error)\(description.map { ": \($0)" } ?? ""); nothing was stored")
        default:
            VaultError(.providerRejected, "the provider refused the device code (invalid_grant: used already or issued to another client); nothing was stored, sign in again")
        }
    }

    private static let deviceEnded = VaultError(.providerRejected,
        "the device sign-in ended before it was approved (its code expired, or it was cancelled); nothing was stored, sign in again")
}
