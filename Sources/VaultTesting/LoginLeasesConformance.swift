import FoundationEssentials
import VaultCore
import VaultCrypto

/// The one conformance suite of the ``LoginLeases`` guarantees, for every lease store: the
/// in-process ``LocalLoginLeases`` and the fleet's PostgreSQL store. Each case states one guarantee.
///
/// ```swift
/// @Test(arguments: LoginLeasesConformance.cases)
/// func conforms(_ check: LoginLeasesConformance.Case) async throws {
///     let clock = ManualClock(), leases = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
///     try await check.run(.init(a: leases, b: leases, shortLease: 1) { clock.advance(by: max(0, $0.timeIntervalSince(clock.now))) })
/// }
/// ```
public enum LoginLeasesConformance {
    /// Two handles on one shared lease store (two daemons of a fleet, or one store twice), and how
    /// the test lets a lease run out on the store's clock.
    public struct Subject: Sendable {
        public let a: any LoginLeases
        public let b: any LoginLeases
        /// A lease duration that `runOut` can pass.
        public let shortLease: TimeInterval
        /// Returns once the store's clock is past the date.
        public let runOut: @Sendable (Date) async throws -> Void

        public init(a: any LoginLeases, b: any LoginLeases, shortLease: TimeInterval, runOut: @escaping @Sendable (Date) async throws -> Void) {
            self.a = a
            self.b = b
            self.shortLease = shortLease
            self.runOut = runOut
        }
    }

    /// One named guarantee.
    public struct Case: Sendable, CustomStringConvertible {
        public let name: String
        public let run: @Sendable (Subject) async throws -> Void
        public var description: String { name }
    }

    public static let cases: [Case] = [
        Case(name: "a claim while held says who holds it until when", run: claimWhileHeld),
        Case(name: "16 concurrent claims from two handles grant exactly one", run: concurrentClaims),
        Case(name: "a holder overtaken after expiry is fenced and writes nothing", run: lateHolderFenced),
        Case(name: "an expired lease nobody claimed may still commit, once", run: expiredUnclaimedCommits),
        Case(name: "a plain store or a delete fences the holder", run: plainStoreAndDeleteFence),
        Case(name: "released lost answers are counted one after another", run: lostAnswersCounted),
        Case(name: "a lease that runs out before its request is recorded is no lost answer", run: unrecordedLeaseIsNoLoss),
        Case(name: "a claim of an item not stored, or deleted, is notFound", run: claimOfMissingItem),
    ]

    static let item = try! ItemKey(service: "login", account: "ada")

    // MARK: Cases

    static func claimWhileHeld(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let first = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: 600))
        try require(first.lost == 0, "a fresh login has no lost answers, got \(first.lost)")
        let held = LeaseClaim.held(owner: "daemon-a", until: first.lease.expiresAt)
        let byB = try await s.b.claimRefresh(of: item, owner: "daemon-b", duration: 600)
        try require(byB == held, "expected \(held), got \(byB)")
        let byA = try await s.a.claimRefresh(of: item, owner: "daemon-a", duration: 600)
        try require(byA == held, "the holder's own second claim must be held too, got \(byA)")
    }

    static func concurrentClaims(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let claims = try await withThrowingTaskGroup(of: LeaseClaim.self) { group in
            for index in 0..<16 {
                let store = index.isMultiple(of: 2) ? s.a : s.b
                group.addTask { try await store.claimRefresh(of: item, owner: "claimer-\(index)", duration: 600) }
            }
            return try await group.reduce(into: [LeaseClaim]()) { $0.append($1) }
        }
        let grants = claims.compactMap { claim -> RefreshLease? in
            if case .granted(let lease, _) = claim { return lease } else { return nil }
        }
        try require(grants.count == 1, "expected exactly one grant, got \(grants.count)")
        for claim in claims {
            if case .held(let owner, _) = claim { try require(owner == grants[0].owner, "held by \(owner), granted to \(grants[0].owner)") }
        }
    }

    static func lateHolderFenced(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let first = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: s.shortLease))
        try require(try await s.a.recordRequest(under: first.lease), "the holder's request must be recorded")
        try await s.runOut(first.lease.expiresAt)
        // A's answer never came back: B takes over and is told one answer is unknown.
        let second = try granted(await s.b.claimRefresh(of: item, owner: "daemon-b", duration: 600))
        try require(second.lease.generation > first.lease.generation, "generations must grow: \(first.lease) then \(second.lease)")
        try require(second.lost == 1, "the overtaken lease is one lost answer, got \(second.lost)")
        try require(!(try await s.a.recordRequest(under: first.lease)), "the overtaken holder's request must not be recorded")
        let late = try await s.a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: first.lease)
        try require(!late, "the overtaken holder's store must be fenced")
        try require(try await s.b.retrieve(item).secret.constantTimeEquals([1]), "a fenced store wrote")
        try await s.a.release(first.lease, answerLost: true)   // fenced: does nothing
        let stored = try await s.b.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: second.lease)
        try require(stored, "the latest holder's store must land")
        try require(try await s.a.retrieve(item).secret.constantTimeEquals([3]), "the holder's tokens are not what the other handle reads")
        // The write ended the lease and the doubt: the next claim is free and starts from 0.
        let next = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: 600))
        try require(next.lost == 0, "a stored refresh clears the doubt, got \(next.lost)")
    }

    static func expiredUnclaimedCommits(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let lease = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: s.shortLease)).lease
        try await s.runOut(lease.expiresAt)
        try require(try await s.a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: lease),
                    "an expired lease nobody claimed since must still commit")
        try require(try await s.b.retrieve(item).secret.constantTimeEquals([2]), "the commit did not land")
        let again = try await s.a.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: lease)
        try require(!again, "a lease once used must fence its holder's second write")
    }

    static func plainStoreAndDeleteFence(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let lease = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: 600)).lease
        try await s.b.store(SecureBytes(copying: [5]), for: item, options: StoreOptions())   // a new sign-in
        let afterSignIn = try await s.a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: lease)
        try require(!afterSignIn, "a plain store must fence the holder")
        try require(try await s.b.retrieve(item).secret.constantTimeEquals([5]), "the fenced store overwrote the sign-in")
        // The plain store ended the lease: a claim is granted at once, with no doubt.
        let next = try granted(await s.b.claimRefresh(of: item, owner: "daemon-b", duration: 600))
        try require(next.lost == 0, "a plain store clears the doubt, got \(next.lost)")
        try await s.a.delete(item)   // a logout
        let afterLogout = try await s.b.store(SecureBytes(copying: [3]), for: item, options: StoreOptions(), holding: next.lease)
        try require(!afterLogout, "a delete must fence the holder")
        try await requireError(.notFound) { try await s.b.retrieve(item) }
        // Signed in again: the old holder stays fenced.
        try await s.a.store(SecureBytes(copying: [4]), for: item, options: StoreOptions())
        let afterNewSignIn = try await s.b.store(SecureBytes(copying: [6]), for: item, options: StoreOptions(), holding: next.lease)
        try require(!afterNewSignIn, "a holder from before a logout must stay fenced after the next sign-in")
        try require(try await s.a.retrieve(item).secret.constantTimeEquals([4]), "the fenced store overwrote the new sign-in")
    }

    static func lostAnswersCounted(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let first = try granted(await s.a.claimRefresh(of: item, owner: "a", duration: 600))
        try await s.a.release(first.lease, answerLost: true)
        let second = try granted(await s.b.claimRefresh(of: item, owner: "b", duration: 600))
        try require(second.lost == 1, "expected 1 lost answer, got \(second.lost)")
        try await s.b.release(second.lease, answerLost: true)
        let third = try granted(await s.a.claimRefresh(of: item, owner: "a", duration: 600))
        try require(third.lost == 2, "expected 2 lost answers, got \(third.lost)")
        let released = try await s.a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: second.lease)
        try require(!released, "a released lease must not write")
        try await s.a.release(third.lease, answerLost: false)   // a known answer: the doubt is gone
        let fourth = try granted(await s.b.claimRefresh(of: item, owner: "b", duration: 600))
        try require(fourth.lost == 0, "a known answer clears the count, got \(fourth.lost)")
    }

    static func unrecordedLeaseIsNoLoss(_ s: Subject) async throws {
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        // A holder that never sent its request (its store went away after the claim, it was killed
        // first) and could not give the lease back: nobody's answer is unknown.
        let first = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: s.shortLease))
        try await s.runOut(first.lease.expiresAt)
        try require(try await s.a.loginsInDoubt() == 0, "a lease that ran out unrecorded is not in doubt")
        let second = try granted(await s.b.claimRefresh(of: item, owner: "daemon-b", duration: s.shortLease))
        try require(second.lost == 0, "a lease that ran out unrecorded is no lost answer, got \(second.lost)")
        // The next holder records its request and is cut off too: that one counts, once.
        try require(try await s.b.recordRequest(under: second.lease), "the holder's request must be recorded")
        try await s.runOut(second.lease.expiresAt)
        try require(try await s.a.loginsInDoubt() == 1, "a lease that ran out after its request is in doubt")
        let third = try granted(await s.a.claimRefresh(of: item, owner: "daemon-a", duration: s.shortLease))
        try require(third.lost == 1, "a lease that ran out after its request is one lost answer, got \(third.lost)")
        // A claim that follows an unrecorded one keeps the count it was given, neither more nor less.
        try await s.runOut(third.lease.expiresAt)
        let fourth = try granted(await s.b.claimRefresh(of: item, owner: "daemon-b", duration: 600))
        try require(fourth.lost == 1, "an unrecorded lease after a lost answer leaves the count at 1, got \(fourth.lost)")
    }

    static func claimOfMissingItem(_ s: Subject) async throws {
        try await requireError(.notFound) { try await s.a.claimRefresh(of: item, owner: "a", duration: 600) }
        try await s.a.store(SecureBytes(copying: [1]), for: item, options: StoreOptions())
        let first = try granted(await s.a.claimRefresh(of: item, owner: "a", duration: 600))
        try await s.b.delete(item)   // a logout while the lease is held
        try await requireError(.notFound) { try await s.b.claimRefresh(of: item, owner: "b", duration: 600) }
        let late = try await s.a.store(SecureBytes(copying: [2]), for: item, options: StoreOptions(), holding: first.lease)
        try require(!late, "a holder from before the delete must be fenced")
        try await requireError(.notFound) { try await s.a.retrieve(item) }
    }

    private static func granted(_ claim: LeaseClaim, line: UInt = #line) throws -> (lease: RefreshLease, lost: Int) {
        guard case .granted(let lease, let lost) = claim else {
            throw ConformanceFailure(message: "expected a granted lease, got \(claim)", line: line)
        }
        return (lease, lost)
    }
}
