import Testing
import VaultPolicy

/// A decision says whether the peer's executable could change it: only then does the daemon read
/// `/proc/PID/exe` again before answering.
struct ExecutableDependenceTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var uid: UInt32
        var executable: String? = "/usr/bin/sorted-cli"
        var operation: String
        var service: String?
        var depends: Bool
        var why: String
        var testDescription: String { why }
    }

    static let cases: [Case] = [
        Case(uid: 1000, operation: "retrieve", service: "com.sorted.api", depends: true, why: "allowed by a rule with executables"),
        Case(uid: 1000, executable: "/usr/local/bin/other", operation: "retrieve", service: "com.sorted.api", depends: true,
             why: "denied now, but another executable would be allowed"),
        Case(uid: 1000, executable: nil, operation: "retrieve", service: "com.sorted.api", depends: true, why: "unknown executable, same rule"),
        Case(uid: 1000, operation: "store", service: "com.sorted.api", depends: false, why: "the rule does not name the operation"),
        Case(uid: 1000, operation: "retrieve", service: "org.other.api", depends: false, why: "the rule does not name the service"),
        Case(uid: 1000, operation: "list", service: nil, depends: true, why: "a listing's entries may be decided by the rule"),
        Case(uid: 1000, operation: "status", service: nil, depends: false, why: "a rule for some services decides no vault-wide operation"),
        Case(uid: 500, operation: "retrieve", service: "com.sorted.api", depends: false, why: "the owner matches only rules without executables"),
        Case(uid: 2000, operation: "session.refresh", service: "app-1", depends: false, why: "another uid: no rule with executables could match"),
    ]

    @Test(arguments: cases)
    func aDecisionDependsOnTheExecutableOnlyWhenARuleWithExecutablesCouldDecideIt(_ c: Case) throws {
        let policy = try Policy.parse(DecisionTests.policyText, file: "access.toml", daemonUID: DecisionTests.daemonUID)
        #expect(policy.namesExecutables)
        let decision = policy.decide(AccessRequest(peer: PeerIdentity(uid: c.uid, gid: 100, executable: c.executable),
                                                   operation: c.operation, service: c.service))
        #expect(decision.dependsOnExecutable == c.depends)
    }

    @Test func aDenyRuleWithExecutablesForEveryServiceMakesVaultWideCallsDependOnIt() throws {
        let policy = try Policy.parse("""
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "no-scripts"
            effect = "deny"
            executables = ["/usr/bin/python3*"]
            operations = ["lock"]
            services = ["*"]
            """, file: "x.toml", daemonUID: 500)
        let owner = PeerIdentity(uid: 500, gid: 500, executable: "/usr/bin/sortedvault")
        let lock = policy.decide(AccessRequest(peer: owner, operation: "lock", service: nil))
        #expect(lock.allowed && lock.dependsOnExecutable)
        #expect(!policy.decide(AccessRequest(peer: owner, operation: "status", service: nil)).dependsOnExecutable)
    }

    @Test func theBuiltInDefaultNeverDependsOnTheExecutable() {
        let policy = Policy.builtInDefault(daemonUID: 500)
        #expect(!policy.namesExecutables)
        for operation in Policy.knownOperations {
            for uid: UInt32 in [500, 501] {
                let request = AccessRequest(peer: PeerIdentity(uid: uid, gid: 500, executable: "/usr/bin/x"), operation: operation, service: "a")
                #expect(!policy.decide(request).dependsOnExecutable)
            }
        }
    }
}
