import FoundationEssentials
import VaultCore
import VaultCrypto

/// The one conformance suite of the ``RevocationOutbox`` guarantees, for every outbox: the
/// in-process ``LocalRevocationOutbox`` and the fleet's PostgreSQL store. Each case states one guarantee.
///
/// ```swift
/// @Test(arguments: RevocationOutboxConformance.cases)
/// func conforms(_ check: RevocationOutboxConformance.Case) async throws {
///     let clock = ManualClock(), outbox = LocalRevocationOutbox(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
///     try await check.run(.init(a: outbox, b: outbox, shortClaim: 1) { clock.advance(by: $0) })
/// }
/// ```
public enum RevocationOutboxConformance {
    /// Two handles on one shared outbox (two daemons of a fleet, or one outbox twice), and how the
    /// test lets time pass on the store's clock.
    public struct Subject: Sendable {
        public let a: any RevocationOutbox
        public let b: any RevocationOutbox
        /// A claim or hold duration that `pass` can wait out.
        public let shortClaim: TimeInterval
        /// Returns once the store's clock has moved on by at least the given seconds from the call.
        public let pass: @Sendable (TimeInterval) async throws -> Void

        public init(a: any RevocationOutbox, b: any RevocationOutbox, shortClaim: TimeInterval,
                    pass: @escaping @Sendable (TimeInterval) async throws -> Void) {
            self.a = a
            self.b = b
            self.shortClaim = shortClaim
            self.pass = pass
        }
    }

    /// One named guarantee.
    public struct Case: Sendable, CustomStringConvertible {
        public let name: String
        public let run: @Sendable (Subject) async throws -> Void
        public var description: String { name }
    }

    public static let cases: [Case] = [
        Case(name: "an entry that wipes deletes the login with it; one that does not keeps it", run: enqueueWipes),
        Case(name: "an entry is its sender's until its hold runs out, then another handle claims it", run: heldThenClaimed),
        Case(name: "16 concurrent claims from two handles hand each entry to exactly one", run: concurrentClaims),
        Case(name: "a claimer that dies leaves its entries to another after the claim time", run: deadClaimer),
        Case(name: "failures are counted, kept and reported stuck; a delivery removes the entry", run: failuresKept),
        Case(name: "a failure reported by an overtaken claimer records nothing", run: overtakenFailure),
    ]

    static let login = try! ItemKey(service: "sortedvault/session/login", account: "ada")
    static let other = try! ItemKey(service: "sortedvault/session/login", account: "grace")
    static let discardAfter = Date(timeIntervalSinceReferenceDate: 4_000_000_000)

    static func payload(_ text: String) -> SecureBytes { SecureBytes(copying: Array(text.utf8)) }

    // MARK: Cases

    static func enqueueWipes(_ s: Subject) async throws {
        try await s.a.store(payload("login"), for: login, options: StoreOptions())
        try await s.a.store(payload("other"), for: other, options: StoreOptions())
        _ = try await s.a.enqueueRevocation(payload("revoke ada"), for: login, wiping: true, holdFor: 600, discardAfter: discardAfter)
        try await requireError(.notFound) { try await s.b.retrieve(login) }
        _ = try await s.a.enqueueRevocation(payload("revoke late tokens"), for: other, wiping: false, holdFor: 600, discardAfter: discardAfter)
        try require(try await s.b.retrieve(other).secret.constantTimeEquals(Array("other".utf8)), "an entry without wipe deleted the login")
        // Wiping a login that is already gone is no error.
        _ = try await s.b.enqueueRevocation(payload("again"), for: login, wiping: true, holdFor: 600, discardAfter: discardAfter)
        let backlog = try await s.b.revocationBacklog(stuckAfter: 1)
        try require(backlog.pending == 3 && backlog.stuck == 0, "expected 3 pending, 0 stuck, got \(backlog)")
        try require(backlog.oldestAge != nil, "a backlog with entries must say how old the oldest is")
    }

    static func heldThenClaimed(_ s: Subject) async throws {
        // A long hold: no other handle gets the entry, however slow the machine.
        let held = try await s.a.enqueueRevocation(payload("held"), for: login, wiping: true, holdFor: 600, discardAfter: discardAfter)
        try require(held.attempts == 0, "a new entry has no attempts, got \(held.attempts)")
        let early = try await s.b.claimDueRevocations(limit: 10, for: 600)
        try require(early.isEmpty, "an entry held by its sender was claimed: \(early)")
        // A short hold that runs out: the entry is another handle's to claim.
        let sent = try await s.a.enqueueRevocation(payload("revoke"), for: login, wiping: true, holdFor: s.shortClaim, discardAfter: discardAfter)
        try await s.pass(s.shortClaim)
        let claimed = try await s.b.claimDueRevocations(limit: 10, for: 600)
        try require(claimed.map(\.id) == [sent.id], "expected entry \(sent.id), got \(claimed)")
        try require(claimed[0].payload.constantTimeEquals(Array("revoke".utf8)), "the claimed payload differs from the one queued")
    }

    static func concurrentClaims(_ s: Subject) async throws {
        var queued: Set<String> = []
        for index in 0..<3 {
            queued.insert(try await s.a.enqueueRevocation(payload("revoke \(index)"), for: login, wiping: false, holdFor: 0,
                                                          discardAfter: discardAfter).id)
        }
        let claims = try await withThrowingTaskGroup(of: [OutboxEntry].self) { group in
            for index in 0..<16 {
                let outbox = index.isMultiple(of: 2) ? s.a : s.b
                group.addTask { try await outbox.claimDueRevocations(limit: 2, for: 600) }
            }
            return try await group.reduce(into: [OutboxEntry]()) { $0 += $1 }
        }
        let ids = claims.map(\.id)
        try require(ids.count == 3 && Set(ids) == queued, "expected each of \(queued.sorted()) claimed once, got \(ids.sorted())")
    }

    static func deadClaimer(_ s: Subject) async throws {
        // A long claim: the other handle does not get the entry while it lasts.
        let kept = try await s.a.enqueueRevocation(payload("kept"), for: login, wiping: true, holdFor: 0, discardAfter: discardAfter)
        let held = try await s.a.claimDueRevocations(limit: 10, for: 600)
        try require(held.map(\.id) == [kept.id], "expected A to claim \(kept.id), got \(held)")
        try require(try await s.b.claimDueRevocations(limit: 10, for: 600).isEmpty, "B claimed an entry A still holds")
        // A short claim, and A dies: it neither delivers nor reports a failure.
        let sent = try await s.a.enqueueRevocation(payload("revoke"), for: login, wiping: true, holdFor: 0, discardAfter: discardAfter)
        let byA = try await s.a.claimDueRevocations(limit: 10, for: s.shortClaim)
        try require(byA.map(\.id) == [sent.id], "expected A to claim \(sent.id), got \(byA)")
        try await s.pass(s.shortClaim)
        let byB = try await s.b.claimDueRevocations(limit: 10, for: 600)
        try require(byB.map(\.id) == [sent.id], "expected B to take over \(sent.id) alone, got \(byB)")
        try require(byB[0].claim != byA[0].claim, "a new claim must have a new number")
        try require(byB[0].payload.constantTimeEquals(Array("revoke".utf8)), "the payload changed hands damaged")
        try await s.b.revocationDelivered(byB[0])
        try require(try await s.a.revocationBacklog(stuckAfter: 1).pending == 1, "expected only the entry A still holds, pending")
    }

    static func failuresKept(_ s: Subject) async throws {
        _ = try await s.a.enqueueRevocation(payload("revoke"), for: login, wiping: true, holdFor: 0, discardAfter: discardAfter)
        for attempt in 0..<3 {
            let claimed = try await s.b.claimDueRevocations(limit: 10, for: 600)
            try require(claimed.count == 1 && claimed[0].attempts == attempt, "expected one entry after \(attempt) failures, got \(claimed)")
            try await s.b.revocationFailed(claimed[0], retryIn: 0, code: "provider unavailable")
        }
        let stuck = try await s.a.revocationBacklog(stuckAfter: 3)
        try require(stuck == RevocationBacklog(pending: 1, stuck: 1, oldestAge: stuck.oldestAge) && stuck.oldestAge != nil,
                    "after 3 failures the entry must be pending and stuck, got \(stuck)")
        try require(try await s.a.revocationBacklog(stuckAfter: 4).stuck == 0, "stuck counted below its threshold")
        let last = try await s.a.claimDueRevocations(limit: 10, for: 600)
        try require(last.count == 1 && last[0].attempts == 3, "a stuck entry is still delivered, got \(last)")
        try await s.a.revocationDelivered(last[0])
        let empty = try await s.b.revocationBacklog(stuckAfter: 3)
        try require(empty == RevocationBacklog(pending: 0, stuck: 0, oldestAge: nil), "expected an empty backlog, got \(empty)")
        try require(try await s.b.claimDueRevocations(limit: 10, for: 600).isEmpty, "a delivered entry was claimed again")
    }

    static func overtakenFailure(_ s: Subject) async throws {
        _ = try await s.a.enqueueRevocation(payload("revoke"), for: login, wiping: true, holdFor: 0, discardAfter: discardAfter)
        let first = try await s.a.claimDueRevocations(limit: 10, for: s.shortClaim)
        try require(first.count == 1, "expected one entry, got \(first)")
        try await s.pass(s.shortClaim)
        let second = try await s.b.claimDueRevocations(limit: 10, for: 600)
        try require(second.map(\.id) == first.map(\.id), "expected B to take over, got \(second)")
        // A wakes up late and reports a failure due at once: B's claim must stand.
        try await s.a.revocationFailed(first[0], retryIn: 0, code: "provider unavailable")
        try require(try await s.a.claimDueRevocations(limit: 10, for: 600).isEmpty, "an overtaken claimer's failure released B's claim")
        try require(try await s.a.revocationBacklog(stuckAfter: 1).stuck == 0, "an overtaken claimer's failure was counted")
    }
}
