import Foundation
import Testing
import TestSupport
import VaultPolicy
#if canImport(Glibc)
import Glibc
#endif

/// Loading refuses, never skips, anything an attacker could have planted or edited.
/// `.serialized` keeps the chmod/chown work from racing other tests for the two cores.
@Suite(.serialized, .timeLimit(.minutes(20)))
struct PolicyLoadTests {
    let uid = getuid()

    @Test func loadsFilesInSortedOrderSkippingSettings() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("20-deny.toml", """
            [[rule]]
            name = "deny-admin"
            effect = "deny"
            operations = ["retrieve"]
            services = ["*.admin"]
            """)
        try dir.write("10-access.toml", TemporaryPolicyDirectory.rule)
        try dir.write("settings.toml", "auto_lock_minutes = 5\n")
        try dir.write("notes.txt", "not a policy")
        let policy = try Policy.load(directory: dir.path + "/", daemonUID: uid)
        #expect(policy.rules.map(\.name) == ["owner", "deny-admin"])
        #expect(policy.rules[1].reference == RuleReference(name: "deny-admin", file: dir.path + "/20-deny.toml", line: 1))
        let peer = PeerIdentity(uid: uid, gid: 0, executable: nil)
        let decision = policy.decide(AccessRequest(peer: peer, operation: "retrieve", service: "x.admin"))
        #expect(decision.description == "denied by rule deny-admin (\(dir.path)/20-deny.toml:1)")
    }

    @Test func duplicateRuleNameAcrossFiles() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("a.toml", TemporaryPolicyDirectory.rule)
        try dir.write("b.toml", "# again\n" + TemporaryPolicyDirectory.rule)
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .duplicateRule)
        #expect(error?.description == "\(dir.path)/b.toml:2: rule name 'owner' is already used at \(dir.path)/a.toml:1; give each rule a unique name")
    }

    @Test func tooManyRulesAcrossFiles() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        func rules(_ range: Range<Int>) -> String {
            range.map { "[[rule]]\nname=\"r\($0)\"\neffect=\"deny\"\noperations=[\"*\"]\nservices=[\"*\"]\n" }.joined()
        }
        try dir.write("a.toml", rules(0..<600))
        try dir.write("b.toml", rules(600..<1001))
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .tooLarge)
        #expect(error?.description.hasPrefix("\(dir.path)/b.toml:2001: more than 1000 rules") == true, "\(String(describing: error))")
    }

    /// A directory holding only settings.toml (as for auto-lock) gets the built-in policy, as no
    /// directory at all does: it refused every client before, the owner's CLI included.
    @Test func aDirectoryWithOnlySettingsGetsTheBuiltInPolicy() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("settings.toml", "auto_lock_minutes = 5\n")
        let policy = try Policy.load(directory: dir.path, daemonUID: uid)
        #expect(policy.rules == Policy.builtInDefault(daemonUID: uid).rules)
        let own = policy.decide(AccessRequest(peer: PeerIdentity(uid: uid, gid: 1, executable: nil), operation: "retrieve", service: "any"))
        #expect(own.allowed)
        let other = policy.decide(AccessRequest(peer: PeerIdentity(uid: uid + 1, gid: 1, executable: "/bin/sh"), operation: "retrieve", service: "any"))
        #expect(!other.allowed)
    }

    @Test func missingDirectory() {
        let error = policyError { _ = try Policy.load(directory: "/nonexistent/sortedvault", daemonUID: uid) }
        #expect(error?.code == .io)
        #expect(error?.file == "/nonexistent/sortedvault")
    }

    @Test func symlinkedFile() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        let real = try dir.write("real.txt", TemporaryPolicyDirectory.rule)
        symlink(real, dir.path + "/access.toml")
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.description == "\(dir.path)/access.toml: is a symlink; policy files must be regular files, so copy the target here instead")
    }

    @Test func symlinkedDirectory() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("access.toml", TemporaryPolicyDirectory.rule)
        let link = dir.path + "-link"
        symlink(dir.path, link)
        defer { unlink(link) }
        for path in [link, link + "/"] {
            let error = policyError { _ = try Policy.load(directory: path, daemonUID: uid) }
            #expect(error?.code == .unsafeFile)
            #expect(error?.description == "\(link): the policy directory is a symlink; point the daemon at the real directory")
            let settingsError = policyError { _ = try DaemonSettings.load(directory: path, daemonUID: uid) }
            #expect(settingsError?.code == .unsafeFile)
        }
    }

    @Test(arguments: [(0o646 as mode_t, "world-writable"), (0o664, "group-writable")])
    func writableFile(mode: mode_t, word: String) throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("access.toml", TemporaryPolicyDirectory.rule, mode: mode)
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.line == nil)
        #expect(error?.description.hasPrefix("\(dir.path)/access.toml: file is \(word) (mode \(String(mode, radix: 8)))") == true, "\(String(describing: error))")
        #expect(error?.message.contains("chmod go-w") == true)
    }

    @Test(arguments: [(0o757 as mode_t, "world-writable"), (0o775, "group-writable")])
    func writableDirectory(mode: mode_t, word: String) throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("access.toml", TemporaryPolicyDirectory.rule)
        chmod(dir.path, mode)
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.description.hasPrefix("\(dir.path): directory is \(word)") == true, "\(String(describing: error))")
    }

    /// A refused directory closes what it opened once: the daemon reloads its policy while other
    /// threads serve calls, and a second close of the number could end one of their connections.
    @Test func aRefusedDirectoryNeverClosesAnotherThreadsDescriptor() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("access.toml", TemporaryPolicyDirectory.rule)
        chmod(dir.path, 0o777)
        var refusals = 0
        let closedUnder = try DescriptorThief.pipesClosedUnderAnotherThread {
            for _ in 0..<20_000 where policyError({ _ = try Policy.load(directory: dir.path, daemonUID: uid) })?.code == .unsafeFile {
                refusals += 1
            }
        }
        #expect(refusals == 20_000)
        #expect(closedUnder == 0, "another thread's pipe was closed under it")
    }

    @Test func fileOwnedByAnotherUID() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        let file = try dir.write("access.toml", TemporaryPolicyDirectory.rule)
        try #require(chown(file, 65534, 65534) == 0, "needs root to chown")
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.description.hasPrefix("\(file): is owned by uid 65534, not by the daemon's uid \(uid) or root") == true, "\(String(describing: error))")
        // Root-owned files are accepted for any daemon uid; a foreign daemon uid refuses this one too.
        try #require(chown(file, 0, 0) == 0)
        _ = try Policy.load(directory: dir.path, daemonUID: uid)
    }

    @Test func directoryOwnedByAnotherUID() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("access.toml", TemporaryPolicyDirectory.rule)
        try #require(chown(dir.path, 65534, 65534) == 0, "needs root to chown")
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.description.hasPrefix("\(dir.path): is owned by uid 65534") == true)
    }

    @Test func notARegularFile() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("a.toml", TemporaryPolicyDirectory.rule)
        #expect(mkfifo(dir.path + "/b.toml", 0o644) == 0)
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.description == "\(dir.path)/b.toml: is not a regular file; remove it or move it out of the policy directory")
    }

    @Test func oversizedFileOnDisk() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("a.toml", String(repeating: "#\n", count: 40_000))
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .tooLarge)
        #expect(error?.description == "\(dir.path)/a.toml: file is 80000 bytes, more than the 65536-byte limit; split it into several files")
    }

    @Test func parseErrorNamesThePath() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        try dir.write("a.toml", TemporaryPolicyDirectory.rule + "colour = \"red\"\n")
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.code == .unknownKey)
        #expect(error?.description.hasPrefix("\(dir.path)/a.toml:7: unknown key 'colour'") == true)
    }

    @Test func invalidUTF8() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        let file = try dir.write("a.toml", "")
        try Data([0x23, 0xFF, 0x0A]).write(to: URL(fileURLWithPath: file))
        let error = policyError { _ = try Policy.load(directory: dir.path, daemonUID: uid) }
        #expect(error?.description == "\(file): file is not valid UTF-8; save it as UTF-8")
    }
}
