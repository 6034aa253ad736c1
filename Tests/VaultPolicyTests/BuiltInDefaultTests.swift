import Foundation
import Testing
@testable import VaultPolicy

/// The built-in texts cannot drift from the shipped `policy/` files.
struct BuiltInDefaultTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func accessTextEqualsShippedFile() throws {
        let shipped = try Data(contentsOf: Self.repository.appendingPathComponent("policy/access.toml"))
        #expect(shipped == Data(BuiltInFiles.access.utf8))
    }

    @Test func settingsTextEqualsShippedFile() throws {
        let shipped = try Data(contentsOf: Self.repository.appendingPathComponent("policy/settings.toml"))
        #expect(shipped == Data(BuiltInFiles.settings.utf8))
    }

    @Test func defaultPolicyAllowsOnlyTheDaemonUID() {
        let policy = Policy.builtInDefault(daemonUID: 1234)
        #expect(policy.rules.count == 1)
        for operation in Policy.knownOperations {
            let own = policy.decide(AccessRequest(peer: PeerIdentity(uid: 1234, gid: 1, executable: nil), operation: operation, service: "any"))
            #expect(own.allowed && own.rule?.name == "owner-full-access")
            let other = policy.decide(AccessRequest(peer: PeerIdentity(uid: 0, gid: 1234, executable: "/bin/sh"), operation: operation, service: nil))
            #expect(other == .defaultDeny)
        }
    }

    @Test func defaultSettings() {
        let settings = DaemonSettings.builtInDefault
        #expect(settings == DaemonSettings(autoLockMinutes: 0, idleConnectionTimeoutSeconds: 60, maxConnectionsPerUID: 64, sessionMinValidSeconds: 60))
        #expect(settings == DaemonSettings.keyDefaults)
    }
}
