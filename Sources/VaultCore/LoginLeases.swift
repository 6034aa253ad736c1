import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// The right to refresh one login, granted by ``LoginLeases/claimRefresh(of:owner:duration:)``.
///
/// Only ``generation`` fences: a holder whose lease ran out may still commit as long as nobody
/// claimed the login (or stored or deleted it) since. ``expiresAt`` only tells others when they may
/// take over.
public struct RefreshLease: Sendable, Equatable, CustomStringConvertible {
    /// The login's item in the store.
    public let item: ItemKey
    /// Who holds it (one session manager; for diagnostics, never for fencing).
    public let owner: String
    /// Strictly greater than every generation the store granted for `item` before.
    public let generation: UInt64
    /// When others may claim the login, on the store's clock.
    public let expiresAt: Date

    public init(item: ItemKey, owner: String, generation: UInt64, expiresAt: Date) {
        self.item = item
        self.owner = owner
        self.generation = generation
        self.expiresAt = expiresAt
    }

    public var description: String { "RefreshLease(\(owner), generation \(generation), until \(expiresAt))" }
}

/// What a claim came to.
public enum LeaseClaim: Sendable, Equatable {
    /// The lease is the caller's. `answersLost` counts the refresh requests of this login whose
    /// answer nobody knows, one after another since the login was last stored or a request last
    /// had a known answer: a holder that released with `answerLost`, or whose lease ran out after
    /// it recorded its request (killed, partitioned, or still waiting). A lease that ran out before
    /// its holder recorded a request counts nothing: that holder sent nothing. 0 when the stored
    /// refresh token is known to be the current one.
    case granted(RefreshLease, answersLost: Int)
    /// Another holder's lease runs until `until` (the store's clock): wait for its result.
    case held(owner: String, until: Date)
}

/// The refresh lease of a login store: exactly one refresh per login across every session manager
/// (every daemon) that shares the store, with no lock, transaction or connection held while the
/// provider is asked.
///
/// ```swift
/// guard case .granted(let lease, let lost) = try await store.claimRefresh(of: item, owner: me, duration: 30) else { wait() }
/// guard try await store.recordRequest(under: lease) else { readAgain() }   // before anything is sent
/// let answer = await provider.refresh(token)                          // nothing held
/// if try await store.store(newRecord, for: item, options: options, holding: lease) == false { revoke(answer) }
/// ```
///
/// Guarantees every conformer keeps:
/// - A claim is one atomic step on the store's clock: it is granted only when no other lease on
///   the item is live (`now < expiresAt`), with a new generation.
/// - ``recordRequest(under:)`` marks the login "refresh in doubt" until the holder stores or
///   releases: a lease that runs out after it is one lost answer for the next claim; one that runs
///   out before it is none, whatever kept its holder from giving it back (a database that went
///   away between the claim and the request, a holder killed before it sent anything).
/// - ``store(_:for:options:holding:)`` writes only while `lease.generation` is still the item's
///   latest: a later claim, a plain ``TokenStore/store(_:for:options:)`` or a ``TokenStore/delete(_:)``
///   of the item (a new sign-in, a logout) fences it, and it returns false having written nothing.
///   Writing clears the lease and the in-doubt mark in the same step.
/// - A plain store or delete of the item ends any lease on it and clears the in-doubt mark (the
///   doubt was about the refresh token it replaces).
/// - Nothing here waits for a provider; a conformer never holds a lock or connection between calls.
///
/// Do not hold a lease across anything but the one provider request it was claimed for, and claim
/// for at least twice the provider's request deadline, so a holder that is still waiting for its
/// answer is not overtaken.
public protocol LoginLeases: TokenStore {
    /// Grants the lease on `item` for `duration` seconds (new fencing generation, owner = `owner`,
    /// the login marked in doubt), or says whose live lease runs until when. One autocommit step.
    /// Throws `.notFound` when the store holds no item at `item` (deleted since the caller read it).
    func claimRefresh(of item: ItemKey, owner: String, duration: TimeInterval) async throws -> LeaseClaim

    /// Records, before the provider request is sent, that the request of `lease` may reach the
    /// provider: from now on the lease is resolved only by a store or a release, and a lease that
    /// runs out counts as a lost answer. Returns false when `lease` is no longer the latest (then
    /// nothing is recorded, and the request must not be sent). Throws when the store cannot record
    /// it; the request must not be sent then either. One autocommit step.
    func recordRequest(under lease: RefreshLease) async throws -> Bool

    /// Stores `secret` at `item` only while `lease` is still the latest (its generation unchanged),
    /// clearing the lease and the in-doubt mark in the same transaction. Returns false when fenced:
    /// nothing was written. Throws as ``TokenStore/store(_:for:options:)`` does (then nothing was
    /// written either, and the lease stands).
    func store(_ secret: SecureBytes, for item: ItemKey, options: StoreOptions, holding lease: RefreshLease) async throws -> Bool

    /// Gives the lease back without new tokens: the provider answered "no", or never got the
    /// request (`answerLost == false`: the in-doubt mark is cleared), or its answer was lost after
    /// the request was sent (`answerLost == true`: the mark stays, and the next claim counts it in
    /// `answersLost`). Does nothing when `lease` is no longer the latest.
    func release(_ lease: RefreshLease, answerLost: Bool) async throws

    /// A hint that `item` or its lease may have changed (stored, released, deleted): it may yield
    /// without a change and may miss one, so a waiter re-reads the store and also looks again by
    /// time. nil when the store offers no hints (waiters then only look again by time). The stream
    /// ends when its consumer stops iterating.
    func changes(of item: ItemKey) async -> AsyncStream<Void>?

    /// How many logins are in doubt, for operators: a refresh answer was lost (released with
    /// `answerLost`), or a lease ran out after its request was recorded. A refresh merely under
    /// way (its lease live) is not counted.
    func loginsInDoubt() async throws -> Int
}

/// A store whose rows are sealed under numbered data keys (the fleet's PostgreSQL store): which
/// keys the rows use, for operators watching a key rotation, and the rotation itself.
public protocol DataKeyReporting: Sendable {
    /// The data keys that sealed rows or queued entries use now, by id ascending.
    func dataKeysInUse() async throws -> [DataKeyUse]
    /// Re-encrypts every row and queued entry under a new data key, `batchSize` rows per
    /// transaction, while readers and writers go on; then retires the older keys.
    func rewrapDataKeys(batchSize: Int) async throws -> DataKeyRewrap
}

/// What a rewrap did: the new data key, the rows it moved, the keys it retired.
public struct DataKeyRewrap: Sendable, Equatable {
    public let keyID: Int
    public let rows: Int
    public let retiredKeyIDs: [Int]

    public init(keyID: Int, rows: Int, retiredKeyIDs: [Int]) {
        self.keyID = keyID
        self.rows = rows
        self.retiredKeyIDs = retiredKeyIDs
    }
}

/// One data key and how many rows (items and queued entries) are sealed under it.
public struct DataKeyUse: Sendable, Equatable {
    public let id: Int
    public let rows: Int

    public init(id: Int, rows: Int) {
        self.id = id
        self.rows = rows
    }
}

extension LoginLeases {
    public func changes(of item: ItemKey) async -> AsyncStream<Void>? { nil }
}
