import FoundationEssentials
import VaultCore
import VaultCrypto

/// The one conformance suite every `TokenStore` backend runs: in-memory, encrypted SQLite, Secret
/// Service and the socket client. Each case states one promise of the ``TokenStore`` contract.
///
/// ```swift
/// @Test(arguments: TokenStoreConformance.cases)
/// func conforms(_ check: TokenStoreConformance.Case) async throws {
///     let clock = ManualClock()
///     try await check.run(TokenStoreConformance.Subject(store: makeStore(clock), clock: clock))
/// }
/// ```
public enum TokenStoreConformance {
    /// The store under test and the clock it was built with.
    public struct Subject: Sendable {
        public let store: any TokenStore
        public let clock: ManualClock
        /// Locks and unlocks the store, for backends that can lock; nil for those that cannot.
        public let lock: (@Sendable () async throws -> Void)?
        public let unlock: (@Sendable () async throws -> Void)?

        public init(store: any TokenStore, clock: ManualClock,
                    lock: (@Sendable () async throws -> Void)? = nil, unlock: (@Sendable () async throws -> Void)? = nil) {
            self.store = store
            self.clock = clock
            self.lock = lock
            self.unlock = unlock
        }
    }

    /// One named promise.
    public struct Case: Sendable, CustomStringConvertible {
        public let name: String
        public let run: @Sendable (Subject) async throws -> Void
        public var description: String { name }
    }

    public static let cases: [Case] = [
        Case(name: "round trip of 0-byte, 1-byte and 256 KiB secrets", run: roundTripsSizes),
        Case(name: "secret over the cap is refused and nothing is stored", run: refusesOversizedSecret),
        Case(name: "secret at exactly the cap round trips", run: storesSecretAtCap),
        Case(name: "retrieve of a missing item is notFound", run: missingIsNotFound),
        Case(name: "store replaces, keeps createdAt, updates modifiedAt", run: replaceKeepsCreation),
        Case(name: "delete removes; deleting again is notFound", run: deleteRemoves),
        Case(name: "label and attributes round trip", run: labelAndAttributesRoundTrip),
        Case(name: "list returns metadata sorted, filtered by service", run: listSortsAndFilters),
        Case(name: "names are separate: (a, bc) is not (ab, c)", run: namesDoNotCollide),
        Case(name: "unicode names round trip", run: unicodeNames),
        Case(name: "expired item disappears when the clock passes its expiry", run: expiryHidesItem),
        Case(name: "50 concurrent stores all land", run: concurrentStores),
        Case(name: "while locked every item operation fails with locked", run: lockedFailsEverything),
    ]

    // MARK: Cases

    static func roundTripsSizes(_ s: Subject) async throws {
        for size in [0, 1, 256 * 1024] {
            let bytes = SecureRandom.bytes(count: size)
            try await s.store.store(SecureBytes(copying: bytes), service: "sizes", account: "n\(size)")
            let item = try await s.store.retrieve(service: "sizes", account: "n\(size)")
            try require(item.secret.count == size, "size \(size) came back as \(item.secret.count) bytes")
            try require(item.secret.constantTimeEquals(bytes), "the \(size)-byte secret came back different")
        }
    }

    static func refusesOversizedSecret(_ s: Subject) async throws {
        let tooBig = SecureBytes(randomCount: Limits.maximumSecretBytes + 1)
        try await requireError(.invalidArgument) { try await s.store.store(tooBig, service: "cap", account: "big") }
        try await requireError(.notFound) { try await s.store.retrieve(service: "cap", account: "big") }
    }

    static func storesSecretAtCap(_ s: Subject) async throws {
        let bytes = SecureRandom.bytes(count: Limits.maximumSecretBytes)
        try await s.store.store(SecureBytes(copying: bytes), service: "cap", account: "exact")
        try require(try await s.store.retrieve(service: "cap", account: "exact").secret.constantTimeEquals(bytes),
                    "a secret of exactly the cap did not round trip")
    }

    static func missingIsNotFound(_ s: Subject) async throws {
        try await requireError(.notFound) { try await s.store.retrieve(service: "nobody", account: "home") }
    }

    static func replaceKeepsCreation(_ s: Subject) async throws {
        try await s.store.store(SecureBytes(copying: Array("first".utf8)), service: "replace", account: "a")
        let first = try await s.store.retrieve(service: "replace", account: "a").metadata
        s.clock.advance(by: 60)
        try await s.store.store(SecureBytes(copying: Array("second, longer".utf8)), service: "replace", account: "a")
        let second = try await s.store.retrieve(service: "replace", account: "a")
        try require(second.secret.constantTimeEquals(Array("second, longer".utf8)), "replace did not replace the secret")
        try require(sameInstant(second.metadata.createdAt, first.createdAt), "replace changed createdAt")
        try require(sameInstant(second.metadata.modifiedAt, first.createdAt.addingTimeInterval(60)), "replace did not update modifiedAt")
        try require(try await s.store.list(service: "replace").count == 1, "replace left two items")
    }

    static func deleteRemoves(_ s: Subject) async throws {
        try await s.store.store(SecureBytes(copying: [1, 2, 3]), service: "del", account: "a")
        try await s.store.store(SecureBytes(copying: [4, 5, 6]), service: "del", account: "b")
        try await s.store.delete(service: "del", account: "a")
        try await requireError(.notFound) { try await s.store.retrieve(service: "del", account: "a") }
        try await requireError(.notFound) { try await s.store.delete(service: "del", account: "a") }
        try require(try await s.store.retrieve(service: "del", account: "b").secret.constantTimeEquals([4, 5, 6]),
                    "deleting one item disturbed another")
    }

    static func labelAndAttributesRoundTrip(_ s: Subject) async throws {
        let expiry = s.clock.now.addingTimeInterval(3600)
        let options = try StoreOptions(label: "Sorted (ada@example.com)", attributes: ["kind": "refresh", "scope": "openid email"], expiresAt: expiry)
        try await s.store.store(SecureBytes(copying: [9]), service: "meta", account: "ada", options: options)
        let item = try await s.store.retrieve(service: "meta", account: "ada").metadata
        try require(item.label == options.label, "label came back as \(String(describing: item.label))")
        try require(item.attributes == options.attributes, "attributes came back as \(item.attributes)")
        try require(item.expiresAt.map { sameInstant($0, expiry) } == true, "expiry came back as \(String(describing: item.expiresAt))")
        let listed = try await s.store.list(service: "meta")
        try require(listed == [item], "list and retrieve disagree on metadata")
    }

    static func listSortsAndFilters(_ s: Subject) async throws {
        for (service, account) in [("b-svc", "2"), ("a-svc", "9"), ("b-svc", "1"), ("a-svc", "1")] {
            try await s.store.store(SecureBytes(copying: [0]), service: service, account: account)
        }
        let all = try await s.store.list().map { "\($0.service)/\($0.account)" }
        try require(all == ["a-svc/1", "a-svc/9", "b-svc/1", "b-svc/2"], "list gave \(all)")
        let onlyB = try await s.store.list(service: "b-svc").map(\.account)
        try require(onlyB == ["1", "2"], "list(service:) gave \(onlyB)")
        try require(try await s.store.list(service: "none").isEmpty, "list of an unknown service was not empty")
    }

    static func namesDoNotCollide(_ s: Subject) async throws {
        try await s.store.store(SecureBytes(copying: [1]), service: "a", account: "bc")
        try await s.store.store(SecureBytes(copying: [2]), service: "ab", account: "c")
        try require(try await s.store.retrieve(service: "a", account: "bc").secret.constantTimeEquals([1]), "(a, bc) was overwritten")
        try require(try await s.store.retrieve(service: "ab", account: "c").secret.constantTimeEquals([2]), "(ab, c) was overwritten")
    }

    static func unicodeNames(_ s: Subject) async throws {
        try await s.store.store(SecureBytes(copying: [7]), service: "café ☕️", account: "José Ñúñez")
        let item = try await s.store.retrieve(service: "café ☕️", account: "José Ñúñez")
        try require(item.metadata.service == "café ☕️" && item.metadata.account == "José Ñúñez", "unicode names changed")
    }

    static func expiryHidesItem(_ s: Subject) async throws {
        let options = try StoreOptions(expiresAt: s.clock.now.addingTimeInterval(30))
        try await s.store.store(SecureBytes(copying: [1]), service: "exp", account: "soon", options: options)
        try await s.store.store(SecureBytes(copying: [2]), service: "exp", account: "never")
        s.clock.advance(by: 29)
        _ = try await s.store.retrieve(service: "exp", account: "soon")
        s.clock.advance(by: 1)
        try await requireError(.notFound) { try await s.store.retrieve(service: "exp", account: "soon") }
        let listed = try await s.store.list(service: "exp").map(\.account)
        try require(listed == ["never"], "an expired item was listed: \(listed)")
        try await requireError(.notFound) { try await s.store.delete(service: "exp", account: "soon") }
    }

    static func concurrentStores(_ s: Subject) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask { try await s.store.store(SecureBytes(copying: [UInt8(i)]), service: "many", account: "acct-\(i)") }
            }
            try await group.waitForAll()
        }
        try require(try await s.store.list(service: "many").count == 50, "not all concurrent stores landed")
        for i in [0, 17, 49] {
            try require(try await s.store.retrieve(service: "many", account: "acct-\(i)").secret.constantTimeEquals([UInt8(i)]),
                        "concurrent store \(i) came back wrong")
        }
    }

    static func lockedFailsEverything(_ s: Subject) async throws {
        guard let lock = s.lock, let unlock = s.unlock else { return }  // the backend cannot lock
        try await s.store.store(SecureBytes(copying: [1]), service: "lock", account: "present")
        try await lock()
        try await requireError(.locked) { try await s.store.retrieve(service: "lock", account: "present") }
        try await requireError(.locked) { try await s.store.retrieve(service: "lock", account: "absent") }
        try await requireError(.locked) { try await s.store.store(SecureBytes(copying: [2]), service: "lock", account: "new") }
        try await requireError(.locked) { try await s.store.delete(service: "lock", account: "present") }
        try await requireError(.locked) { try await s.store.delete(service: "lock", account: "absent") }
        try await requireError(.locked) { try await s.store.list() }
        try await requireError(.locked) { try await s.store.list(service: "lock") }
        try await unlock()
        try require(try await s.store.retrieve(service: "lock", account: "present").secret.constantTimeEquals([1]),
                    "the item did not survive lock and unlock")
    }
}
