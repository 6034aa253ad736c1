import FoundationEssentials
import VaultCore
import VaultCrypto

/// The one conformance suite of the ``DueRefreshes`` guarantees, for every store that schedules
/// proactive refreshes: the in-process ``LocalLoginLeases`` and the fleet's PostgreSQL store.
///
/// ```swift
/// @Test(arguments: DueRefreshesConformance.cases)
/// func conforms(_ check: DueRefreshesConformance.Case) async throws {
///     let clock = ManualClock(), store = LocalLoginLeases(wrapping: InMemoryTokenStore(clock: clock), clock: clock)
///     try await check.run(.init(a: store, b: store, clock: clock, shortLease: 1) { clock.advance(by: max(0, $0.timeIntervalSince(clock.now))) })
/// }
/// ```
public enum DueRefreshesConformance {
    /// Two handles on one store (two daemons of a fleet, or one store twice), the clock both compute
    /// due times on, and how the test lets a lease run out on the store's lease clock.
    public struct Subject: Sendable {
        public let a: any DueRefreshes
        public let b: any DueRefreshes
        public let clock: ManualClock
        /// A lease duration that `runOut` can pass.
        public let shortLease: TimeInterval
        /// Returns once the store's lease clock is past the date.
        public let runOut: @Sendable (Date) async throws -> Void

        public init(a: any DueRefreshes, b: any DueRefreshes, clock: ManualClock, shortLease: TimeInterval,
                    runOut: @escaping @Sendable (Date) async throws -> Void) {
            self.a = a
            self.b = b
            self.clock = clock
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
        Case(name: "only logins whose due time has come are claimed, earliest first, with their lease", run: dueOnly),
        Case(name: "concurrent claims from two handles never hand out one login twice", run: concurrentClaims),
        Case(name: "a claimed login is not claimed again until its lease ends", run: notClaimedTwice),
        Case(name: "due times move with each write and go with a delete", run: dueTimesMoveWithWrites),
        Case(name: "a login written without a due time, or expired, is never claimed", run: neverDue),
        Case(name: "a postponed login is due again at the new time, never sooner", run: postponed),
    ]

    static func login(_ name: String) -> ItemKey { try! ItemKey(service: "login", account: name) }

    static func write(_ store: any DueRefreshes, _ item: ItemKey, due: Date?, expiresAt: Date? = nil) async throws {
        try await store.store(SecureBytes(copying: [1]), for: item, options: StoreOptions(expiresAt: expiresAt, refreshDueAt: due))
    }

    static func claimed(_ store: any DueRefreshes, limit: Int = 100, owner: String = "daemon-a", duration: TimeInterval = 600) async throws -> [DueRefresh] {
        try await store.claimDueRefreshes(limit: limit, owner: owner, duration: duration)
    }

    static func same(_ date: Date?, _ expected: Date) -> Bool { date.map { sameInstant($0, expected) } ?? false }

    // MARK: Cases

    static func dueOnly(_ s: Subject) async throws {
        let now = s.clock.now
        try await write(s.a, login("ada"), due: now.addingTimeInterval(-10))
        try await write(s.a, login("bob"), due: now.addingTimeInterval(-20))
        try await write(s.b, login("cy"), due: now.addingTimeInterval(60))
        let earliest = try await s.a.earliestRefreshDue()
        try require(same(earliest, now.addingTimeInterval(-20)), "the earliest due time is bob's, got \(String(describing: earliest))")
        let first = try await claimed(s.a, limit: 1)
        try require(first.map(\.lease.item) == [login("bob")], "the earliest due login first, got \(first)")
        try require(first[0].lease.owner == "daemon-a" && first[0].answersLost == 0, "got \(first[0])")
        // The claim took the lease, as claimRefresh would have.
        let byB = try await s.b.claimRefresh(of: login("bob"), owner: "daemon-b", duration: 600)
        try require(byB == .held(owner: "daemon-a", until: first[0].lease.expiresAt), "expected bob held by daemon-a, got \(byB)")
        let second = try await claimed(s.b, owner: "daemon-b")
        try require(second.map(\.lease.item) == [login("ada")], "only ada is left due, got \(second)")
        try require(try await claimed(s.a).isEmpty, "cy is not due yet")
        s.clock.advance(by: 60)
        let third = try await claimed(s.a)
        try require(third.map(\.lease.item) == [login("cy")], "cy is due now, got \(third)")
    }

    static func concurrentClaims(_ s: Subject) async throws {
        let now = s.clock.now
        let logins = (0..<20).map { login("user-\($0)") }
        for (index, item) in logins.enumerated() {
            try await write(index.isMultiple(of: 2) ? s.a : s.b, item, due: now.addingTimeInterval(-Double(index)))
        }
        let rounds = try await withThrowingTaskGroup(of: [DueRefresh].self) { group in
            for index in 0..<8 {
                let store = index.isMultiple(of: 2) ? s.a : s.b
                group.addTask { try await claimed(store, limit: 3, owner: "claimer-\(index)") }
            }
            return try await group.reduce(into: [[DueRefresh]]()) { $0.append($1) }
        }
        var all = rounds.flatMap { $0 }
        all += try await claimed(s.a, owner: "sweeper")
        let items = all.map(\.lease.item)
        try require(Set(items).count == items.count, "a login was handed out twice: \(items.count) claims of \(Set(items).count) logins")
        try require(Set(items) == Set(logins), "every due login is claimed once in all: got \(Set(items).count) of \(logins.count)")
    }

    static func notClaimedTwice(_ s: Subject) async throws {
        let now = s.clock.now
        try await write(s.a, login("ada"), due: now.addingTimeInterval(-1))
        try await write(s.a, login("bob"), due: now.addingTimeInterval(-1))
        // A refresh a caller started holds bob's lease: no claim takes bob meanwhile.
        guard case .granted = try await s.a.claimRefresh(of: login("bob"), owner: "caller", duration: 600) else {
            throw ConformanceFailure(message: "bob's lease was not granted", line: #line)
        }
        let first = try await claimed(s.a, duration: s.shortLease)
        try require(first.map(\.lease.item) == [login("ada")], "ada alone is due with a free lease, got \(first)")
        try require(try await claimed(s.b, owner: "daemon-b").isEmpty, "a claimed login was claimed again while its lease lasted")
        try require(try await s.a.recordRequest(under: first[0].lease), "the holder's request must be recorded")
        try await s.runOut(first[0].lease.expiresAt)
        // Its holder never came back: the next claim takes it over, and counts the unknown answer.
        let second = try await claimed(s.b, owner: "daemon-b")
        try require(second.map(\.lease.item) == [login("ada")], "the login is claimed again once its lease ended, got \(second)")
        try require(second[0].answersLost == 1, "the lease that ran out is one lost answer, got \(second[0].answersLost)")
        try require(second[0].lease.generation > first[0].lease.generation, "generations must grow")
        let late = try await s.a.store(SecureBytes(copying: [2]), for: login("ada"), options: StoreOptions(), holding: first[0].lease)
        try require(!late, "the overtaken holder's store must be fenced")
    }

    static func dueTimesMoveWithWrites(_ s: Subject) async throws {
        let item = login("ada")
        try await write(s.a, item, due: s.clock.now.addingTimeInterval(100))
        try require(try await claimed(s.b).isEmpty, "not due yet")
        try await write(s.b, item, due: s.clock.now.addingTimeInterval(-1))   // a sign-in with a token due at once
        let first = try await claimed(s.a)
        try require(first.map(\.lease.item) == [item], "the new write's due time counts, got \(first)")
        let refreshed = try await s.a.store(SecureBytes(copying: [2]), for: item,
                                            options: StoreOptions(refreshDueAt: s.clock.now.addingTimeInterval(100)), holding: first[0].lease)
        try require(refreshed, "the holder's write must land")
        try require(try await claimed(s.b).isEmpty, "the refresh's write moved the due time on")
        try require(same(try await s.b.earliestRefreshDue(), s.clock.now.addingTimeInterval(100)), "the earliest due time is the refresh's")
        s.clock.advance(by: 100)
        let second = try await claimed(s.b, owner: "daemon-b")
        try require(second.map(\.lease.item) == [item], "due again at the refresh's due time, got \(second)")
        try await s.a.delete(item)
        try require(try await s.a.earliestRefreshDue() == nil, "a deleted login has no due time")
        try require(try await claimed(s.a).isEmpty, "a deleted login is never claimed")
    }

    static func neverDue(_ s: Subject) async throws {
        try await write(s.a, login("ada"), due: s.clock.now.addingTimeInterval(-1))
        try await write(s.b, login("ada"), due: nil)   // written again without a refresh token
        try await write(s.a, login("bob"), due: s.clock.now.addingTimeInterval(5), expiresAt: s.clock.now.addingTimeInterval(10))
        s.clock.advance(by: 20)   // bob is past its due time, and expired
        try require(try await claimed(s.a).isEmpty, "a login without a due time, or expired, was claimed")
        try require(try await s.b.earliestRefreshDue() == nil, "no login is due ever")
    }

    static func postponed(_ s: Subject) async throws {
        let item = login("ada")
        try await write(s.a, item, due: s.clock.now.addingTimeInterval(-1))
        let first = try await claimed(s.a)
        try require(first.count == 1, "the due login is claimed, got \(first)")
        try await s.a.postponeRefresh(first[0].lease, until: s.clock.now.addingTimeInterval(50))
        try await s.a.release(first[0].lease, answerLost: false)
        try require(try await claimed(s.b).isEmpty, "a postponed login was claimed before its new due time")
        try require(same(try await s.b.earliestRefreshDue(), s.clock.now.addingTimeInterval(50)), "the due time is the postponed one")
        // A lease no longer the latest postpones nothing.
        try await s.a.postponeRefresh(first[0].lease, until: s.clock.now.addingTimeInterval(5000))
        s.clock.advance(by: 50)
        let second = try await claimed(s.b, owner: "daemon-b")
        try require(second.map(\.lease.item) == [item], "due again at the postponed time, got \(second)")
        // Never sooner: a date before the due time changes nothing.
        try await s.b.postponeRefresh(second[0].lease, until: s.clock.now.addingTimeInterval(-100))
        try await s.b.release(second[0].lease, answerLost: false)
        try require(same(try await s.a.earliestRefreshDue(), s.clock.now), "a postponement made the login due sooner")
    }
}
