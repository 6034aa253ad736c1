import Logging
import Synchronization
import Testing
import Varlink
import VaultPolicy
@testable import VaultDaemon

/// The daemon reads the peer's executable again only for a decision that a rule with
/// `executables` could make; the read is counted through the injected reader.
@Suite(.timeLimit(.minutes(20))) struct ExecutableRecheckTests {
    final class Reader: Sendable {
        let reads = Atomic<Int>(0)
        let unchanged: Bool
        init(unchanged: Bool) { self.unchanged = unchanged }
        func read(_ peer: PeerCredentials) -> Bool {
            reads.add(1, ordering: .relaxed)
            return unchanged
        }
        var count: Int { reads.load(ordering: .relaxed) }
    }

    static let owner = PeerCredentials(uid: 500, gid: 500, pid: 42, executable: "/usr/bin/sortedvault")

    static func access(_ policy: Policy, _ reader: Reader) -> AccessControl {
        var access = AccessControl(policySource: PolicySource(policy: policy, directory: nil, daemonUID: 500),
                                   logger: Logger(label: "test"))
        access.executableIsUnchanged = { reader.read($0) }
        return access
    }

    static func policyNamingExecutables() throws -> Policy {
        try Policy.parse("""
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "no-scripts-for-bank"
            effect = "deny"
            executables = ["/usr/bin/python3*"]
            operations = ["retrieve", "list"]
            services = ["com.bank.*"]
            """, file: "access.toml", daemonUID: 500)
    }

    @Test func withTheDefaultPolicyNoCallReadsTheExecutable() throws {
        let reader = Reader(unchanged: false)
        let access = Self.access(.builtInDefault(daemonUID: 500), reader)
        for operation in Policy.knownOperations {
            let service: String? = Policy.vaultWideOperations.contains(operation) ? nil : "com.bank.main"
            try access.require(Self.owner, operation, service: service)
        }
        #expect(access.allows(Self.owner, "list", service: "com.bank.main"))
        #expect(reader.count == 0)
    }

    @Test func aCallThatAnExecutableRuleCouldDecideReadsTheExecutableEveryTime() throws {
        let reader = Reader(unchanged: true)
        let access = Self.access(try Self.policyNamingExecutables(), reader)
        try access.require(Self.owner, "retrieve", service: "com.bank.main")
        try access.require(Self.owner, "retrieve", service: "com.bank.main")
        #expect(reader.count == 2)
        try access.require(Self.owner, "retrieve", service: "com.shop")
        try access.require(Self.owner, "store", service: "com.bank.main")
        #expect(reader.count == 2, "no rule with executables could decide these")
    }

    @Test func aPeerThatNoLongerRunsItsExecutableIsRefusedWhereTheRuleCouldDecide() throws {
        let reader = Reader(unchanged: false)
        let access = Self.access(try Self.policyNamingExecutables(), reader)
        #expect(throws: VarlinkError.executableChanged) {
            try access.require(Self.owner, "retrieve", service: "com.bank.main")
        }
        #expect(!access.allows(Self.owner, "list", service: "com.bank.main"), "a listing's entry fails closed")
        #expect(access.allows(Self.owner, "list", service: "com.shop"))
        try access.require(Self.owner, "retrieve", service: "com.shop")
    }
}
