import Foundation
import Testing
import VaultPolicy
#if canImport(Glibc)
import Glibc
#endif

struct DaemonSettingsTests {
    @Test func parsesAllKeys() throws {
        let settings = try DaemonSettings.parse("""
            auto_lock_minutes = 15
            idle_connection_timeout_seconds = 3_600
            max_connections_per_uid = 1
            [session]
            min_valid_seconds = 0
            """, file: "settings.toml")
        #expect(settings == DaemonSettings(autoLockMinutes: 15, idleConnectionTimeoutSeconds: 3600, maxConnectionsPerUID: 1, sessionMinValidSeconds: 0))
    }

    @Test func theConnectionLimitsPerProcessAndExecutableAndTheReserveAreRead() throws {
        let settings = try DaemonSettings.parse("""
            max_connections_per_process = 4
            max_connections_per_executable = 6
            reserved_connections_for_new_processes = 3
            """, file: "settings.toml")
        #expect(settings.maxConnectionsPerProcess == 4)
        #expect(settings.maxConnectionsPerExecutable == 6)
        #expect(settings.reservedConnectionsForNewProcesses == 3)
        #expect(DaemonSettings.builtInDefault.reservedConnectionsForNewProcesses == nil)
        #expect(DaemonSettings.builtInDefault.maxConnectionsPerProcess == 32)
        #expect(DaemonSettings.builtInDefault.maxConnectionsPerExecutable == 56)
    }

    @Test func backendIsEmbeddedUnlessSetToSecretService() throws {
        #expect(DaemonSettings.builtInDefault.backend == .embedded)
        #expect(try DaemonSettings.parse("backend = \"secret-service\"\n", file: "settings.toml").backend == .secretService)
    }

    @Test func theDeviceFlowIsOnUnlessTheSessionTableTurnsItOff() throws {
        #expect(DaemonSettings.builtInDefault.sessionDeviceFlow)
        #expect(try DaemonSettings.parse("[session]\ndevice_flow = false\n", file: "settings.toml").sessionDeviceFlow == false)
        #expect(throws: PolicyError.self) { try DaemonSettings.parse("[session]\ndevice_flow = \"no\"\n", file: "settings.toml") }
    }

    @Test func theProviderDeadlineIsTheTransportsOwnUnlessTheSessionTableSetsOneInRange() throws {
        #expect(try DaemonSettings.parse("", file: "settings.toml").sessionProviderDeadlineSeconds == nil)
        #expect(try DaemonSettings.parse("[session]\nprovider_deadline_seconds = 4\n", file: "settings.toml").sessionProviderDeadlineSeconds == 4)
        #expect(throws: PolicyError.self) { try DaemonSettings.parse("[session]\nprovider_deadline_seconds = 0\n", file: "settings.toml") }
        #expect(throws: PolicyError.self) { try DaemonSettings.parse("[session]\nprovider_deadline_seconds = 301\n", file: "settings.toml") }
    }

    @Test func absentKeysKeepDefaults() throws {
        let settings = try DaemonSettings.parse("auto_lock_minutes = 10080\n", file: "settings.toml")
        var expected = DaemonSettings.builtInDefault
        expected.autoLockMinutes = 10080
        #expect(settings == expected)
    }

    @Test(arguments: [
        ("\nauto_lock_minutes = 10081\n", 2, "'auto_lock_minutes' is 10081, outside the allowed range 0…10080"),
        ("idle_connection_timeout_seconds = 0\n", 1, "outside the allowed range 1…3600"),
        ("max_connections_per_uid = 4097\n", 1, "outside the allowed range 1…4096"),
        ("[session]\nmin_valid_seconds = -1\n", 2, "outside the allowed range 0…86400"),
        ("auto_lock_minutes = \"5\"\n", 1, "'auto_lock_minutes' must be an integer from 0 to 10080, not a string"),
        ("auto_lock = 5\n", 1, "unknown key 'auto_lock' in the top level; known keys: auto_lock_minutes, idle_connection_timeout_seconds, max_connections_per_uid, max_connections_per_process, max_connections_per_executable, reserved_connections_for_new_processes, backend, access_log_names, session"),
        ("max_connections_per_process = 0\n", 1, "outside the allowed range 1…4096"),
        ("max_connections_per_uid = 8\nreserved_connections_for_new_processes = 8\n", 2, "must be less than max_connections_per_uid (8)"),
        ("backend = \"keychain\"\n", 1, "backend \"keychain\" is not known; write backend = \"embedded\", backend = \"secret-service\" or backend = \"postgresql\""),
        ("backend = 1\n", 1, "'backend' must be a string"),
        ("[session]\nmin_valid = 5\n", 2, "unknown key 'min_valid' in [session]; known keys: min_valid_seconds"),
        ("[session]\n[session]\n", 2, "[session] conflicts with 'session'"),
        ("session = 1\n", 1, "'session' must be a table written as [session]"),
        ("[[session]]\n", 1, "'session' must be a table written as [session]"),
    ])
    func errors(text: String, line: Int, fragment: String) {
        let error = policyError { _ = try DaemonSettings.parse(text, file: "settings.toml") }
        #expect(error?.line == line)
        #expect(error?.description.hasPrefix("settings.toml:\(line): ") == true)
        #expect(error?.description.contains(fragment) == true, "\(String(describing: error))")
    }

    @Test func loadFromDirectory() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        #expect(try DaemonSettings.load(directory: dir.path, daemonUID: getuid()) == .builtInDefault)
        try dir.write("settings.toml", "max_connections_per_uid = 8\n")
        #expect(try DaemonSettings.load(directory: dir.path, daemonUID: getuid()).maxConnectionsPerUID == 8)
        try dir.write("settings.toml", "max_connections_per_uid = 8\n", mode: 0o666)
        let error = policyError { _ = try DaemonSettings.load(directory: dir.path, daemonUID: getuid()) }
        #expect(error?.code == .unsafeFile)
        #expect(error?.file == dir.path + "/settings.toml")
    }

    @Test func symlinkedSettingsFile() throws {
        let dir = try TemporaryPolicyDirectory()
        defer { dir.remove() }
        let real = try dir.write("real.txt", "auto_lock_minutes = 1\n")
        symlink(real, dir.path + "/settings.toml")
        let error = policyError { _ = try DaemonSettings.load(directory: dir.path, daemonUID: getuid()) }
        #expect(error?.code == .unsafeFile)
    }
}
