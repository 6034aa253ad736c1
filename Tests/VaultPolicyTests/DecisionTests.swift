import Testing
import VaultPolicy

/// Policy text against tables of requests, in the manner of Vault's `acl_test.go`.
struct DecisionTests {
    static let daemonUID: UInt32 = 500

    static let policyText = """
    [[rule]]
    name = "owner"
    effect = "allow"
    uids = ["@self"]
    operations = ["*"]
    services = ["*"]

    [[rule]]
    name = "cli-tokens"
    effect = "allow"
    uids = [1000]
    executables = ["/usr/bin/sorted-*"]
    operations = ["retrieve", "list", "status"]
    services = ["com.sorted.*"]

    [[rule]]
    name = "group-sessions"
    effect = "allow"
    gids = [100]
    operations = ["session.*"]
    services = ["app-?"]

    [[rule]]
    name = "no-admin-secrets"
    effect = "deny"
    uids = ["*"]
    operations = ["retrieve", "delete"]
    services = ["*.admin"]

    [[rule]]
    name = "no-admin-secrets-again"
    effect = "deny"
    operations = ["retrieve"]
    services = ["com.sorted.admin"]
    """

    struct Case: CustomTestStringConvertible, Sendable {
        var uid: UInt32
        var gid: UInt32 = 100
        var executable: String? = "/usr/bin/sorted-cli"
        var operation: String
        var service: String?
        var allowed: Bool
        /// Expected deciding rule and its header line; nil for default deny.
        var rule: (String, Int)?
        var why: String
        var testDescription: String { why }
    }

    static let cases: [Case] = [
        Case(uid: 500, operation: "retrieve", service: "com.example.api", allowed: true, rule: ("owner", 1), why: "@self may do anything"),
        Case(uid: 500, operation: "change-passphrase", service: nil, allowed: true, rule: ("owner", 1), why: "operation * covers every known operation"),
        Case(uid: 500, executable: nil, operation: "lock", service: nil, allowed: true, rule: ("owner", 1), why: "unknown executable matches a rule without executables"),
        Case(uid: 500, operation: "retrieve", service: "com.sorted.admin", allowed: false, rule: ("no-admin-secrets", 23), why: "deny wins over allow; first matching deny decides"),
        Case(uid: 500, operation: "store", service: "com.sorted.admin", allowed: true, rule: ("owner", 1), why: "deny rule does not cover store"),
        Case(uid: 0, operation: "status", service: nil, allowed: false, rule: nil, why: "root is not @self: default deny"),
        Case(uid: 1000, operation: "retrieve", service: "com.sorted.api", allowed: true, rule: ("cli-tokens", 8), why: "uid, executable glob, operation and service glob all match"),
        Case(uid: 1000, operation: "status", service: nil, allowed: false, rule: nil, why: "a rule for some services does not grant a vault-wide operation"),
        Case(uid: 1000, operation: "list", service: nil, allowed: true, rule: ("cli-tokens", 8), why: "a rule for some services grants a listing (entries are checked one by one)"),
        Case(uid: 1000, executable: "/usr/local/bin/sorted-cli", operation: "retrieve", service: "com.sorted.api", allowed: false, rule: nil, why: "executable glob does not match another directory"),
        Case(uid: 1000, executable: nil, operation: "retrieve", service: "com.sorted.api", allowed: false, rule: nil, why: "unknown executable never matches a rule with executables"),
        Case(uid: 1000, operation: "store", service: "com.sorted.api", allowed: false, rule: nil, why: "operation not listed"),
        Case(uid: 1000, operation: "retrieve", service: "org.other.api", allowed: false, rule: nil, why: "service glob does not match"),
        Case(uid: 1000, operation: "retrieve", service: "com.sorted.admin", allowed: false, rule: ("no-admin-secrets", 23), why: "deny wins over cli-tokens"),
        Case(uid: 1000, operation: "list", service: "com.sorted.x/y.z", allowed: true, rule: ("cli-tokens", 8), why: "* matches across / and ."),
        Case(uid: 2000, executable: nil, operation: "session.refresh", service: "app-1", allowed: true, rule: ("group-sessions", 16), why: "gid match, session.* prefix, ? one character"),
        Case(uid: 2000, operation: "session.watch", service: "app-é", allowed: true, rule: ("group-sessions", 16), why: "? matches one Unicode scalar"),
        Case(uid: 2000, operation: "session.refresh", service: "app-12", allowed: false, rule: nil, why: "? matches exactly one character"),
        Case(uid: 2000, operation: "session.refresh", service: "app-", allowed: false, rule: nil, why: "? does not match nothing"),
        Case(uid: 2000, gid: 101, operation: "session.refresh", service: "app-1", allowed: false, rule: nil, why: "gid does not match"),
        Case(uid: 2000, operation: "store", service: "app-1", allowed: false, rule: nil, why: "session.* does not cover store"),
        Case(uid: 2000, operation: "session.list", service: nil, allowed: true, rule: ("group-sessions", 16), why: "a listing of every login: allowed by a rule for some services"),
        Case(uid: 2000, operation: "session.status", service: nil, allowed: false, rule: nil, why: "an operation on one login asked without it: only a rule for every service decides"),
    ]

    @Test(arguments: cases)
    func decides(_ c: Case) throws {
        let policy = try Policy.parse(Self.policyText, file: "access.toml", daemonUID: Self.daemonUID)
        let request = AccessRequest(peer: PeerIdentity(uid: c.uid, gid: c.gid, executable: c.executable),
                                    operation: c.operation, service: c.service)
        let decision = policy.decide(request)
        #expect(decision.allowed == c.allowed)
        #expect(decision.rule?.name == c.rule?.0)
        #expect(decision.rule?.line == c.rule?.1)
        #expect(decision.rule.map { $0.file } == c.rule.map { _ in "access.toml" })
    }

    @Test func descriptionsNameTheDecidingRule() throws {
        let policy = Policy.builtInDefault(daemonUID: 500)
        let owner = PeerIdentity(uid: 500, gid: 500, executable: nil)
        let other = PeerIdentity(uid: 501, gid: 500, executable: "/usr/bin/x")
        let allowed = policy.decide(AccessRequest(peer: owner, operation: "retrieve", service: "a"))
        #expect(allowed.description == "allowed by rule owner-full-access (built-in access.toml:2)")
        let denied = policy.decide(AccessRequest(peer: other, operation: "retrieve", service: "a"))
        #expect(denied == .defaultDeny)
        #expect(denied.description == "denied: no rule matches (default deny)")

        let deny = try Policy.parse("""
            [[rule]]
            name = "nobody"
            effect = "deny"
            operations = ["*"]
            services = ["*"]
            """, file: "x.toml", daemonUID: 500)
        #expect(deny.decide(AccessRequest(peer: owner, operation: "lock", service: nil)).description
                == "denied by rule nobody (x.toml:1)")
    }

    @Test func noRulesMeansDefaultDeny() throws {
        let policy = try Policy.parse("# nothing\n", file: "empty.toml", daemonUID: 500)
        #expect(policy.rules.isEmpty)
        let decision = policy.decide(AccessRequest(peer: PeerIdentity(uid: 500, gid: 500, executable: nil), operation: "status", service: nil))
        #expect(decision == .defaultDeny)
    }

    @Test func compiledRulesAreVisible() throws {
        let policy = try Policy.parse(Self.policyText, file: "access.toml", daemonUID: 500)
        #expect(policy.rules.map(\.name) == ["owner", "cli-tokens", "group-sessions", "no-admin-secrets", "no-admin-secrets-again"])
        #expect(policy.rules[0].uids == [500])
        #expect(policy.rules[3].uids == nil)   // "*" = any
        #expect(policy.rules[2].gids == [100])
        #expect(policy.rules[1].executables == [Glob("/usr/bin/sorted-*")])
        #expect(policy.rules[3].effect == .deny)
    }
}
