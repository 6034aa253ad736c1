import Testing
import VaultPolicy

/// `gids` means membership: the effective gid or any supplementary group (`sg` and `newgrp`
/// change only the effective gid).
struct GroupRuleTests {
    static let policy: Policy = {
        let text = """
            [[rule]]
            name = "owner"
            effect = "allow"
            uids = ["@self"]
            operations = ["*"]
            services = ["*"]

            [[rule]]
            name = "no-contractors"
            effect = "deny"
            gids = [4242]
            operations = ["retrieve"]
            services = ["*"]

            [[rule]]
            name = "staff-status"
            effect = "allow"
            gids = [50]
            operations = ["status"]
            services = ["*"]
            """
        do { return try Policy.parse(text, file: "groups.toml", daemonUID: 500) } catch { preconditionFailure("\(error)") }
    }()

    static func decide(gid: UInt32, groups: [UInt32]?, uid: UInt32 = 500, _ operation: String = "retrieve") -> Decision {
        policy.decide(AccessRequest(peer: PeerIdentity(uid: uid, gid: gid, groups: groups, executable: nil), operation: operation, service: "s"))
    }

    @Test func aDenyRuleMatchesASupplementaryGroup() {
        #expect(Self.decide(gid: 500, groups: [500, 4242]).rule?.name == "no-contractors")
        #expect(!Self.decide(gid: 500, groups: [500, 4242]).allowed)
    }

    @Test func aDenyRuleStillMatchesTheEffectiveGID() {
        #expect(!Self.decide(gid: 4242, groups: [500]).allowed)
    }

    @Test func unknownSupplementaryGroupsMatchDenyRulesAndNotAllowRules() {
        #expect(!Self.decide(gid: 500, groups: nil).allowed, "deny rules fail closed")
        #expect(!Self.decide(gid: 1, groups: nil, uid: 9, "status").allowed, "allow rules need the effective gid")
        #expect(Self.decide(gid: 50, groups: nil, uid: 9, "status").allowed)
    }

    @Test func anAllowRuleMatchesASupplementaryGroup() {
        #expect(Self.decide(gid: 1, groups: [1, 50], uid: 9, "status").allowed)
        #expect(!Self.decide(gid: 1, groups: [1, 51], uid: 9, "status").allowed)
    }

    @Test func aPeerOutsideTheGroupIsNotDenied() {
        #expect(Self.decide(gid: 500, groups: [500, 27]).allowed)
    }
}
