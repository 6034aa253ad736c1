import Testing
import VaultPolicy

/// What a rule with `services` means for the operations that name no service, and who is admitted
/// at connect (docs/daemon.md, "Operations without a service").
struct VaultWideOperationTests {
    static let policyText = """
    [[rule]]
    name = "owner-cli"
    effect = "allow"
    uids = ["@self"]
    executables = ["/usr/bin/sortedvault*"]
    operations = ["*"]
    services = ["*"]

    [[rule]]
    name = "app-a"
    effect = "allow"
    uids = ["@self"]
    executables = ["/usr/bin/app-a"]
    operations = ["*"]
    services = ["com.a.*"]

    [[rule]]
    name = "no-bank"
    effect = "deny"
    uids = ["@self"]
    operations = ["*"]
    services = ["com.bank*"]

    [[rule]]
    name = "locked-out"
    effect = "deny"
    executables = ["/usr/bin/locked-out"]
    operations = ["*"]
    services = ["*"]

    [[rule]]
    name = "locked-out-tries"
    effect = "allow"
    executables = ["/usr/bin/locked-out"]
    operations = ["retrieve"]
    services = ["*"]
    """

    struct Case: CustomTestStringConvertible, Sendable {
        var executable: String
        var operation: String
        var service: String?
        var allowed: Bool
        var rule: String?
        var testDescription: String { "\(executable) \(operation) \(service ?? "(no service)") → \(allowed ? "allowed" : "denied") by \(rule ?? "default deny")" }
    }

    static let owner = "/usr/bin/sortedvault-cli"
    static let app = "/usr/bin/app-a"

    static let cases: [Case] = [
        Case(executable: app, operation: "lock", service: nil, allowed: false, rule: nil),
        Case(executable: app, operation: "unlock", service: nil, allowed: false, rule: nil),
        Case(executable: app, operation: "change-passphrase", service: nil, allowed: false, rule: nil),
        Case(executable: app, operation: "status", service: nil, allowed: false, rule: nil),
        Case(executable: app, operation: "list", service: nil, allowed: true, rule: "app-a"),
        Case(executable: app, operation: "list", service: "com.b.x", allowed: false, rule: nil),
        Case(executable: app, operation: "session.watch", service: nil, allowed: true, rule: "app-a"),
        Case(executable: app, operation: "retrieve", service: "com.a.api", allowed: true, rule: "app-a"),
        Case(executable: app, operation: "retrieve", service: nil, allowed: false, rule: nil),
        Case(executable: owner, operation: "lock", service: nil, allowed: true, rule: "owner-cli"),
        Case(executable: owner, operation: "status", service: nil, allowed: true, rule: "owner-cli"),
        Case(executable: owner, operation: "list", service: nil, allowed: true, rule: "owner-cli"),
        Case(executable: owner, operation: "list", service: "com.bank.x", allowed: false, rule: "no-bank"),
        Case(executable: owner, operation: "retrieve", service: "com.bank.x", allowed: false, rule: "no-bank"),
        Case(executable: owner, operation: "retrieve", service: "com.bankrupt", allowed: false, rule: "no-bank"),
        Case(executable: owner, operation: "retrieve", service: "com.example", allowed: true, rule: "owner-cli"),
        Case(executable: "/usr/bin/locked-out", operation: "retrieve", service: "x", allowed: false, rule: "locked-out"),
        Case(executable: "/usr/bin/locked-out", operation: "list", service: nil, allowed: false, rule: "locked-out"),
    ]

    @Test(arguments: cases)
    func decides(_ c: Case) throws {
        let policy = try Policy.parse(Self.policyText, file: "access.toml", daemonUID: 500)
        let decision = policy.decide(AccessRequest(peer: PeerIdentity(uid: 500, gid: 500, executable: c.executable),
                                                   operation: c.operation, service: c.service))
        #expect(decision.allowed == c.allowed)
        #expect(decision.rule?.name == c.rule)
    }

    @Test(arguments: [
        ("/usr/bin/sortedvault", true), ("/usr/bin/app-a", true), ("/usr/bin/stranger", false), ("/usr/bin/locked-out", false),
    ])
    func admissionAsksWhetherThePeerCouldBeAllowedAnything(_ executable: String, _ admitted: Bool) throws {
        let policy = try Policy.parse(Self.policyText, file: "access.toml", daemonUID: 500)
        #expect(policy.admits(PeerIdentity(uid: 500, gid: 500, executable: executable)) == admitted)
        #expect(!policy.admits(PeerIdentity(uid: 501, gid: 500, executable: executable)), "another uid")
    }

    @Test func aDenyRuleForSomeServicesTurnsNobodyAway() throws {
        let policy = try Policy.parse("""
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "no-bank"
            effect = "deny"
            operations = ["*"]
            services = ["com.bank*"]
            """, file: "access.toml", daemonUID: 500)
        #expect(policy.admits(PeerIdentity(uid: 500, gid: 500, executable: "/usr/bin/sortedvault")))
        #expect(policy.decide(AccessRequest(peer: PeerIdentity(uid: 500, gid: 500, executable: nil), operation: "status", service: nil)).allowed)
    }

    /// A call about something whose service could not be found (a sign-in flow that has ended) is
    /// decided as a listing: a rule for some services allows it, so the daemon can answer that the
    /// thing is gone; a program with no rule for the operation, or one denied it for every service,
    /// is refused.
    @Test func aCallWhoseServiceIsGoneIsDecidedAsAListing() throws {
        let policy = try Policy.parse(Self.policyText, file: "access.toml", daemonUID: 500)
        func decide(_ executable: String, _ operation: String, forSomeService: Bool) -> Decision {
            policy.decide(AccessRequest(peer: PeerIdentity(uid: 500, gid: 500, executable: executable), operation: operation,
                                        service: nil, forSomeService: forSomeService))
        }
        #expect(!decide(Self.app, "session.login", forSomeService: false).allowed, "without the flag, a rule for some services decides nothing")
        #expect(decide(Self.app, "session.login", forSomeService: true).rule?.name == "app-a")
        #expect(decide(Self.app, "session.login", forSomeService: true).allowed)
        #expect(!decide("/usr/bin/stranger", "session.login", forSomeService: true).allowed)
        #expect(decide("/usr/bin/locked-out", "session.login", forSomeService: true).rule?.name == "locked-out")
        // With a service the flag means nothing: the service decides.
        let named = policy.decide(AccessRequest(peer: PeerIdentity(uid: 500, gid: 500, executable: Self.app), operation: "session.login",
                                                service: "com.b.x", forSomeService: true))
        #expect(!named.allowed)
    }
}
