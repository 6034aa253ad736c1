import Foundation
import TestSupport
import Testing
import VaultCore
import VaultClient
import Varlink
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// The shipped units in `systemd/`, checked with systemd's own tools (Debian's `systemd` package):
    /// `systemd-analyze verify`, and the daemon started through `systemd-socket-activate`, a real
    /// LISTEN_FDS launcher, on the socket unit's path and mode. A user manager
    /// (`systemd --user`) cannot run where PID 1 is not systemd: see docs/install.md.
    @Suite struct SystemdUnitTests {
        /// A home with the binary installed where the service's ExecStart expects it (%h/.local/bin).
        private static func installedHome(_ cli: CLIHarness) throws -> String {
            let home = cli.environment["HOME"]!
            try FileManager.default.createDirectory(atPath: home + "/.local/bin", withIntermediateDirectories: true)
            try? FileManager.default.removeItem(atPath: home + "/.local/bin/sortedvault")
            try FileManager.default.createSymbolicLink(atPath: home + "/.local/bin/sortedvault", withDestinationPath: CLIHarness.executable)
            return home
        }

        @Test func bothShippedUnitsPassSystemdAnalyzeVerify() throws {
            let cli = try CLIHarness()
            _ = try Self.installedHome(cli)
            let units = cli.root + "/units"
            try FileManager.default.createDirectory(atPath: units, withIntermediateDirectories: true)
            for name in ["sortedvault.socket", "sortedvault.service"] {
                try FileManager.default.copyItem(atPath: CLIHarness.repository + "/systemd/" + name, toPath: units + "/" + name)
            }
            let (status, out, err) = try Subprocess.run(
                ["/usr/bin/systemd-analyze", "--user", "--man=no", "verify", units + "/sortedvault.socket", units + "/sortedvault.service"],
                environment: cli.environment, input: Data())
            let output = String(decoding: out + err, as: UTF8.self)
            #expect(status == 0, "systemd-analyze verify failed (\(status)): \(output)")
            // Unknown keys and bad values are only warnings to systemd: any line about a unit is a failure here.
            #expect(!output.contains("sortedvault."), "systemd-analyze verify complained: \(output)")
        }

        @Test func theServiceSandboxAllowsTheNetworkTheKeyringAndNameResolution() throws {
            let service = try SystemdUnitFile(shipped: "sortedvault.service")
            let families = try #require(service.allowedAddressFamilies(), "no RestrictAddressFamilies= (keep the restriction)")
            #expect(families.allowList)
            for needed in ["AF_UNIX", "AF_INET", "AF_INET6"] {
                #expect(families.families.contains(needed), "RestrictAddressFamilies= forbids \(needed)")
            }
            #expect(!["yes", "true", "on", "1"].contains(service.value("Service", "PrivateNetwork")?.lowercased() ?? "no"),
                    "PrivateNetwork= leaves only loopback: refreshes and revocations could never reach a provider")
            #expect(service.values("Service", "IPAddressDeny").isEmpty, "IPAddressDeny= would block providers")
            // Hardening that costs nothing stays.
            for (key, value) in [("NoNewPrivileges", "yes"), ("LockPersonality", "yes"), ("MemoryDenyWriteExecute", "yes"),
                                 ("LimitCORE", "0"), ("UMask", "0077"), ("LimitNOFILE", "65536")] {
                #expect(service.value("Service", key) == value, "\(key)= should stay \(value)")
            }
        }

        @Test func aDaemonStartedBySystemdSocketActivateOnTheUnitsSocketRefreshesALogin() async throws {
            let cli = try CLIHarness(autostart: false)
            try cli.initKeyFileVault()
            let home = try Self.installedHome(cli)
            let socketUnit = try SystemdUnitFile(shipped: "sortedvault.socket")
            let serviceUnit = try SystemdUnitFile(shipped: "sortedvault.service")
            // %t is the user's runtime directory, %h the home directory (systemd.unit(5)).
            let path = try #require(socketUnit.value("Socket", "ListenStream")).replacingOccurrences(of: "%t", with: cli.runtimeDir)
            #expect(path == cli.socket, "the socket unit listens where the CLI does not look")
            let socketMode = try #require(socketUnit.value("Socket", "SocketMode").flatMap { mode_t($0, radix: 8) })
            let directoryMode = try #require(socketUnit.value("Socket", "DirectoryMode").flatMap { mode_t($0, radix: 8) })
            let directory = (path as NSString).deletingLastPathComponent
            #expect(mkdir(directory, directoryMode) == 0)
            chmod(directory, directoryMode)
            let execStart = try #require(serviceUnit.value("Service", "ExecStart"))
                .replacingOccurrences(of: "%h", with: home).split(separator: " ").map(String.init)

            let log = open(cli.daemonLogPath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
            let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
            defer { close(log); close(null) }
            // What a user manager gives a service: HOME and the XDG directories (the daemon's defaults).
            let passed = ["HOME", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "PATH"].flatMap { ["-E", $0] }
            let launcher = try Subprocess.spawn(
                ["/usr/bin/systemd-socket-activate", "-l", path] + passed + ["--"] + execStart,
                environment: cli.environment, stdin: null, stdout: log, stderr: log)
            defer { launcher.signal(SIGTERM); launcher.wait() }
            var info = stat()
            let deadline = Date().addingTimeInterval(600)
            while stat(path, &info) != 0 && Date() < deadline { usleep(10_000) }
            // systemd chmods the socket to SocketMode after binding; systemd-socket-activate has no such option.
            #expect(chmod(path, socketMode) == 0)
            _ = stat(path, &info)
            #expect(info.st_mode & 0o777 == socketMode, "socket mode \(String(info.st_mode & 0o777, radix: 8))")
            #expect(info.st_mode & S_IFMT == S_IFSOCK)

            // The first connection starts the daemon, which serves the inherited listener.
            let provider = try OAuthTestProvider()
            let key = try ItemKey(service: "com.sorted.api", account: "ada")
            let sessions = SessionClient(socketPath: path, timeout: .seconds(30))
            guard case .object(let response) = try JSONValue.parse(try await provider.signIn()) else { throw HarnessError("bad token response") }
            try await sessions.save(tokenResponse: response, provider: try provider.provider(), for: key)
            let result = try await sessions.refresh(key)
            #expect(result.outcome == "refreshed", "refresh through the socket-activated daemon: \(result) — \(cli.daemonOutput())")
            #expect(try await provider.refreshRequests() == 1, "the provider saw no refresh")
            #expect(cli.daemonOutput().contains("Execing"), "systemd-socket-activate did not start the daemon: \(cli.daemonOutput())")
        }
    }
}
