import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// One queued revocation as its claimer holds it: the sealed payload opened, and the claim that
/// lets the claimer record a failure.
public struct OutboxEntry: Sendable, CustomStringConvertible {
    /// The entry's id in its outbox.
    public let id: String
    /// What was enqueued (a session manager's sealed revocation record).
    public let payload: SecureBytes
    /// Failed deliveries so far.
    public let attempts: Int
    /// This claim's number: a failure is recorded only while the entry was not claimed again since.
    public let claim: UInt64

    public init(id: String, payload: SecureBytes, attempts: Int, claim: UInt64) {
        self.id = id
        self.payload = payload
        self.attempts = attempts
        self.claim = claim
    }

    public var description: String { "OutboxEntry(\(id), attempts \(attempts), claim \(claim))" }
}

/// How many revocations wait, for `fleet status` and metrics.
public struct RevocationBacklog: Sendable, Equatable {
    /// Entries not delivered yet, stuck ones included.
    public var pending: Int
    /// Entries that failed at least the `stuckAfter` attempts asked about: still retried, and
    /// worth an operator's look (a provider that keeps refusing or cannot be reached).
    public var stuck: Int
    /// How long the oldest entry has waited, in seconds on the store's clock; nil when none waits.
    public var oldestAge: TimeInterval?

    public init(pending: Int, stuck: Int, oldestAge: TimeInterval?) {
        self.pending = pending
        self.stuck = stuck
        self.oldestAge = oldestAge
    }
}

/// The revocation outbox of a login store: a logout's revocation is written in the same atomic step
/// as the wipe of the login, and delivered at least once by any session manager (any daemon) that
/// shares the store — never silently abandoned.
///
/// ```swift
/// let entry = try await outbox.enqueueRevocation(record, for: login, wiping: true, holdFor: 60, discardAfter: end)
/// switch await provider.revoke(record) {                                   // nothing held
/// case .revoked: try await outbox.revocationDelivered(entry)
/// case .transient: try await outbox.revocationFailed(entry, retryIn: backoff, code: "unreachable")
/// }
/// for entry in try await outbox.claimDueRevocations(limit: 16, for: 60) { … }   // background work
/// ```
///
/// Guarantees every conformer keeps:
/// - ``enqueueRevocation(_:for:wiping:holdFor:discardAfter:)`` with `wiping` writes the entry and
///   deletes the item as one step where the store allows it (one transaction on a database); where it
///   does not, the entry is written first, so a crash between leaves the entry and the login, and
///   ``revocationsToReconcile()`` returns such entries for the caller to finish the wipe.
/// - A claim is one atomic step on the store's clock: it hands out entries whose next attempt is due
///   and pushes their next attempt `for` seconds on, so concurrent claimers never get the same entry,
///   and the entries of a claimer that died come back once that time has passed.
/// - A failure counts one more attempt and sets the next one; entries are kept however many attempts
///   fail (counted as stuck by ``revocationBacklog(stuckAfter:)``). Only a delivery, or the entry's
///   `discardAfter` passing (its tokens are dead anyway), removes an entry.
/// - Payloads are sealed like the store's items; nothing here waits for a provider, and no lock or
///   transaction is held between calls.
public protocol RevocationOutbox: TokenStore {
    /// Queues `payload` (about the login stored at `item`) and, with `wiping`, deletes `item` in the
    /// same step (a missing item is not an error). The entry is the caller's for `holdFor` seconds,
    /// as if it had claimed it, so it can deliver at once without a background claimer racing it.
    func enqueueRevocation(_ payload: SecureBytes, for item: ItemKey, wiping: Bool, holdFor: TimeInterval,
                           discardAfter: Date) async throws -> OutboxEntry

    /// Up to `limit` entries whose next attempt is due, each now the caller's for `duration` seconds.
    func claimDueRevocations(limit: Int, for duration: TimeInterval) async throws -> [OutboxEntry]

    /// The provider confirmed (or answered for good): the entry is removed.
    func revocationDelivered(_ entry: OutboxEntry) async throws

    /// The provider could not be reached or answered "later": one more attempt is counted, the next
    /// one is due in `retryIn` seconds, and `code` (a short text, never a secret or provider text)
    /// says why. Does nothing when the entry was claimed again since `entry`'s claim.
    func revocationFailed(_ entry: OutboxEntry, retryIn: TimeInterval, code: String) async throws

    /// How many entries wait, how many failed at least `stuckAfter` times, and the oldest one's age.
    func revocationBacklog(stuckAfter: Int) async throws -> RevocationBacklog

    /// Entries whose wipe may not have happened (the store could not write entry and wipe as one
    /// step, and the process stopped between them): run at start-up; the caller wipes the login
    /// when it still is the one the payload names. Empty for a store whose enqueue is atomic.
    func revocationsToReconcile() async throws -> [OutboxEntry]

    /// Whether other processes enqueue and claim here too (a shared database): then a manager looks
    /// for due entries from time to time, not only when it knows of one of its own.
    var outboxIsShared: Bool { get }
}

extension RevocationOutbox {
    public var outboxIsShared: Bool { true }
}
