import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// One sign-in the manager began: the secrets that must come back (state), stay here (the PKCE
/// verifier) and be found in the id token (the nonce). It lives only in the manager's memory.
struct PendingSignIn: Sendable {
    let id: String
    /// The user (uid) who began it: no other user's call finds it.
    let owner: UInt32
    /// The program that began it (the peer's executable, as the policy sees it; nil: unknown or
    /// in-process): the per-program cap counts by it.
    var program: String? = nil
    let service: String
    let account: String?
    let provider: OAuthProvider
    let redirectURI: URL
    let state: SecureBytes
    let verifier: SecureBytes
    let nonce: SecureBytes?
    let expiresAt: Date
    /// A device sign-in's code and how often to poll; nil for a browser or paste sign-in.
    var device: DeviceGrant? = nil
    /// Whether a CompleteLogin is polling for this device sign-in (a second caller is refused).
    var polling = false
}

/// What a device sign-in (RFC 8628) polls with: the device code never leaves the manager.
struct DeviceGrant: Sendable {
    let deviceCode: SecureBytes
    /// Seconds between polls; slow_down adds 5 (RFC 8628 §3.5).
    var interval: TimeInterval
}

/// The sign-ins under way, bounded: at most ``capacity`` in all, ``capacityPerOwner`` per user and
/// ``capacityPerProgram`` per program of a user, each found only by its owner and before it expires,
/// and taken out when it completes, so a sign-in completes at most once. Expired ones are dropped
/// on every use ("now" is the caller's: the manager's injected clock).
///
/// Why per program: a same-uid program the policy confines to a few services could otherwise fill
/// the user's whole share and block every sign-in of the user until they expire; now it fills its
/// own, and the user (any program of the uid allowed `session.login` on their services) can end
/// them (``SignInFlows/cancelAll(owner:where:)``).
struct PendingSignIns: Sendable {
    static let capacity = 64
    static let capacityPerOwner = 32
    static let capacityPerProgram = 8

    private var flows: [String: PendingSignIn] = [:]

    var count: Int { flows.count }

    /// Adds `flow`, or refuses when the table, the owner's share or its program's share is full.
    mutating func add(_ flow: PendingSignIn, now: Date) throws {
        purge(now)
        guard flows.count < Self.capacity else {
            throw VaultError(.unavailable, "too many sign-ins are under way (\(Self.capacity)); finish or cancel one, or wait until they expire")
        }
        let owners = flows.values.filter { $0.owner == flow.owner }
        guard owners.count < Self.capacityPerOwner else {
            throw VaultError(.unavailable, "this user has \(Self.capacityPerOwner) sign-ins under way; finish or cancel one (`sortedvault session cancel-logins`), or wait until they expire")
        }
        guard owners.filter({ $0.program == flow.program }).count < Self.capacityPerProgram else {
            throw VaultError(.unavailable, "this program has \(Self.capacityPerProgram) sign-ins under way; finish or cancel one (`sortedvault session cancel-logins`), or wait until they expire")
        }
        flows[flow.id] = flow
    }

    /// Every sign-in of `owner` under way.
    mutating func all(owner: UInt32, now: Date) -> [PendingSignIn] {
        purge(now)
        return flows.values.filter { $0.owner == owner }
    }

    /// The owner's sign-in `id`, unless it expired, completed or belongs to another user.
    mutating func find(_ id: String, owner: UInt32, now: Date) -> PendingSignIn? {
        purge(now)
        guard let flow = flows[id], flow.owner == owner else { return nil }
        return flow
    }

    /// Replaces the owner's sign-in `id` while it is still there (a device sign-in's poll state).
    mutating func update(_ flow: PendingSignIn, now: Date) {
        guard find(flow.id, owner: flow.owner, now: now) != nil else { return }
        flows[flow.id] = flow
    }

    /// Takes the owner's sign-in out: it can never be found again.
    mutating func take(_ id: String, owner: UInt32, now: Date) -> PendingSignIn? {
        guard let flow = find(id, owner: owner, now: now) else { return nil }
        flows[id] = nil
        return flow
    }

    private mutating func purge(_ now: Date) {
        flows = flows.filter { $0.value.expiresAt > now }
    }
}
