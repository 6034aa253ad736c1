import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// scripts/package on the debug build (nothing is built again): the .deb's contents, its
    /// dependencies and lintian's verdict, then an install with dpkg into an empty root, the installed
    /// programs used for real, and a purge that leaves nothing behind.
    @Suite struct PackageTests {
        static let programs = ["sortedvault", "sortedvault-cli"]
        /// The fleet daemon, in a package of its own (sortedvault-fleet).
        static let fleetPrograms = ["sortedvault-fleet-daemon"]
        /// git's and docker's credential helpers: links to sortedvault-cli, which runs the helper its name says.
        static let helpers = ["git-credential-sortedvault", "docker-credential-sortedvault"]

        /// The packages (sortedvault, sortedvault-fleet), built once for every test into their own temp directory.
        static let packages: Result<(main: String, fleet: String), HarnessError> = {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("sv-deb-\(UUID().uuidString.prefix(8))").path
            let buildDir = (CLIHarness.executable as NSString).deletingLastPathComponent
            let run = try? Subprocess.run(
                ["/bin/bash", CLIHarness.repository + "/scripts/package", "--build-dir", buildDir, "--output-dir", output, "--fast", "--no-lintian"],
                environment: ProcessInfo.processInfo.environment, input: Data())
            let built = (try? FileManager.default.contentsOfDirectory(atPath: output)) ?? []
            guard let (status, _, _) = run, status == 0,
                  let main = built.first(where: { $0.hasPrefix("sortedvault_") && $0.hasSuffix(".deb") }),
                  let fleet = built.first(where: { $0.hasPrefix("sortedvault-fleet_") && $0.hasSuffix(".deb") }) else {
                return .failure(HarnessError("scripts/package failed (built \(built)): \(String(decoding: run?.2 ?? Data(), as: UTF8.self))"))
            }
            return .success((output + "/" + main, output + "/" + fleet))
        }()

        static func tool(_ argv: [String], environment: [String: String] = ProcessInfo.processInfo.environment) throws -> (Int32, String, String) {
            let (status, out, err) = try Subprocess.run(argv, environment: environment, input: Data())
            return (status, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
        }

        /// A daemon that holds every secret maps no libcurl, and with it no second TLS library
        /// (gnutls, OpenSSL), Kerberos or LDAP client: only the C libraries it really needs.
        @Test(arguments: ["sortedvault-cli", "sortedvault-fleet-daemon"])
        func theDaemonLinksNoSecondNetworkStack(program: String) throws {
            let daemon = (CLIHarness.executable as NSString).deletingLastPathComponent + "/" + program
            let (status, linked, errors) = try Self.tool(["/usr/bin/ldd", daemon])
            #expect(status == 0, "\(errors)")
            for library in ["libcurl", "libgnutls", "libssl.", "libcrypto.", "libkrb5", "libgssapi", "libldap", "libnghttp2", "libssh2",
                            "libFoundationNetworking"] {
                #expect(!linked.contains(library), "\(program) links \(library): \(linked)")
            }
            #expect(linked.contains("libsodium") && linked.contains("libsqlite3"), "\(linked)")
        }

        @Test func thePackageHoldsEveryProgramPageCompletionAndUnitAndLintianFindsNoError() throws {
            let deb = try Self.packages.get().main
            let (listed, contents, _) = try Self.tool(["/usr/bin/dpkg-deb", "-c", deb])
            #expect(listed == 0)
            for program in Self.programs { #expect(contents.contains("./usr/bin/\(program)\n"), "\(program)") }
            for program in Self.fleetPrograms { #expect(!contents.contains("./usr/bin/\(program)"), "\(program) is in sortedvault") }
            for helper in Self.helpers { #expect(contents.contains("./usr/bin/\(helper) -> sortedvault-cli\n"), "\(helper)") }
            for path in ["./usr/lib/systemd/user/sortedvault.socket", "./usr/lib/systemd/user/sortedvault.service",
                         "./usr/share/man/man1/sortedvault.1.gz", "./usr/share/man/man1/sortedvault-store.1.gz",
                         "./usr/share/man/man1/sortedvault-session-save.1.gz", "./usr/share/man/man1/sortedvault-init.1.gz",
                         "./usr/share/man/man1/sortedvault-daemon.1.gz", "./usr/share/man/man1/git-credential-sortedvault.1.gz",
                         "./usr/share/man/man1/docker-credential-sortedvault-get.1.gz",
                         "./usr/share/bash-completion/completions/sortedvault", "./usr/share/zsh/vendor-completions/_sortedvault",
                         "./usr/share/fish/vendor_completions.d/sortedvault.fish", "./usr/share/doc/sortedvault/copyright",
                         "./usr/share/doc/sortedvault/changelog.Debian.gz",
                         "./usr/lib/python3/dist-packages/sortedvault_keyring/backend.py",
                         "./usr/lib/python3/dist-packages/sortedvault_keyring-0.1.0.dist-info/entry_points.txt"] {
                #expect(contents.contains(path), "\(path)")
            }
            let (_, depends, _) = try Self.tool(["/usr/bin/dpkg-deb", "-f", deb, "Depends"])
            for library in ["libc6", "libsodium23", "libsqlite3-0", "python3:any"] { #expect(depends.contains(library), "\(depends)") }
            // One network stack, one TLS library: the HTTP client is AsyncHTTPClient on swift-nio-ssl.
            for library in ["libcurl", "libgnutls", "libssl", "libkrb5", "libldap"] { #expect(!depends.contains(library), "\(depends)") }
            let (_, recommends, _) = try Self.tool(["/usr/bin/dpkg-deb", "-f", deb, "Recommends"])
            #expect(recommends.contains("libsecret-1-0"))

            let (lintian, findings, errors) = try Self.tool(["/usr/bin/lintian", "--fail-on", "error", deb])
            #expect(lintian == 0, "\(findings)\(errors)")
            #expect(!findings.split(separator: "\n").contains { $0.hasPrefix("E:") }, "\(findings)")
        }

        @Test func theFleetPackageHoldsTheFleetDaemonAndNeedsTheSameVersionOfSortedvault() throws {
            let (main, deb) = try Self.packages.get()
            let (listed, contents, _) = try Self.tool(["/usr/bin/dpkg-deb", "-c", deb])
            #expect(listed == 0)
            for program in Self.fleetPrograms { #expect(contents.contains("./usr/bin/\(program)\n"), "\(program)") }
            for program in Self.programs { #expect(!contents.contains("./usr/bin/\(program)\n"), "\(program) is in sortedvault-fleet") }
            #expect(contents.contains("./usr/share/doc/sortedvault-fleet/copyright"))
            #expect(contents.contains("./usr/share/man/man1/sortedvault-fleet-daemon.1.gz"))
            let (_, version, _) = try Self.tool(["/usr/bin/dpkg-deb", "-f", main, "Version"])
            let (_, depends, _) = try Self.tool(["/usr/bin/dpkg-deb", "-f", deb, "Depends"])
            #expect(depends.contains("sortedvault (= \(version.trimmingCharacters(in: .whitespacesAndNewlines)))"), "\(depends)")
            for library in ["libc6", "libsodium23", "libsqlite3-0"] { #expect(depends.contains(library), "\(depends)") }
            for library in ["libcurl", "libgnutls", "libssl", "libkrb5", "libldap"] { #expect(!depends.contains(library), "\(depends)") }
            let (lintian, findings, errors) = try Self.tool(["/usr/bin/lintian", "--fail-on", "error", deb])
            #expect(lintian == 0, "\(findings)\(errors)")
        }

        @Test func theInstalledProgramsKeepASecretAndAPurgeLeavesOnlyTheUsersData() throws {
            let (deb, fleetDeb) = try Self.packages.get()
            let root = FileManager.default.temporaryDirectory.appendingPathComponent("sv-root-\(UUID().uuidString.prefix(8))").path
            defer { try? FileManager.default.removeItem(atPath: root) }
            try FileManager.default.createDirectory(atPath: root + "/var/lib/dpkg/updates", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/var/lib/dpkg/info", withIntermediateDirectories: true)
            FileManager.default.createFile(atPath: root + "/var/lib/dpkg/status", contents: Data())
            // The libraries come from this machine, not from the empty root: --force-depends.
            let dpkg = ["/usr/bin/dpkg", "--root=" + root, "--admindir=" + root + "/var/lib/dpkg", "--log=/dev/null", "--force-not-root",
                        "--force-depends", "--force-script-chrootless"]
            let (installed, _, installErrors) = try Self.tool(dpkg + ["-i", deb, fleetDeb])
            try #require(installed == 0, "\(installErrors)")

            let harness = try CLIHarness()
            let bin = root + "/usr/bin/sortedvault"
            #expect(try harness.run(["--version"], executable: bin).text.hasPrefix("0."))
            #expect(try harness.run(["init", "--key-source", "keyfile"], executable: bin).status == 0)
            // The installed front starts the installed daemon (`sortedvault-cli daemon`) on demand.
            #expect(try harness.run(["store", "com.example.api", "ada"], input: Data("s3cret".utf8), executable: bin).status == 0)
            let retrieved = try harness.run(["retrieve", "com.example.api", "ada"], executable: bin)
            #expect(retrieved.status == 0 && retrieved.text == "s3cret", "\(retrieved.stderr)")
            let daemons = harness.processesOfThisWorld().compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\($0)/exe") }
            #expect(daemons.contains(root + "/usr/bin/sortedvault-cli"), "\(daemons)")

            // Python finds the keyring backend by its entry point where Debian's python3 looks, and it
            // reads the same secret; run as root, Python writes byte code beside it, which the purge must remove.
            var python = harness.environment
            python["PYTHONPATH"] = root + "/usr/lib/python3/dist-packages"
            python["PYTHONDONTWRITEBYTECODE"] = nil
            let (keyring, answer, keyringErrors) = try Self.tool([PythonRunner.python, "-c", """
                import keyring
                print(type(keyring.get_keyring()).__module__, keyring.get_password("com.example.api", "ada"))
                """], environment: python)
            #expect(keyring == 0 && answer == "sortedvault_keyring.backend s3cret\n", "\(answer.debugDescription) \(keyringErrors)")

            harness.killStrayDaemons()
            // The installed fleet daemon runs (its own tests serve a real PostgreSQL: FleetDaemonTests).
            #expect(try Self.tool([root + "/usr/bin/sortedvault-fleet-daemon", "--version"]).1.hasPrefix("0."))
            let (purged, _, purgeErrors) = try Self.tool(dpkg + ["--purge", "sortedvault-fleet", "sortedvault"])
            #expect(purged == 0 && !purgeErrors.contains("not empty"), "\(purgeErrors)")
            let left = try FileManager.default.subpathsOfDirectory(atPath: root).filter { !$0.hasPrefix("var") }
            #expect(left.isEmpty, "\(left)")
            // The user's data stays where it was, outside the package.
            #expect(FileManager.default.fileExists(atPath: harness.database))
        }
    }
}

extension DaemonSuite {
    /// scripts/install into a prefix from the debug build: what a user building from source gets.
    @Suite struct FromSourceInstallTests {
        @Test func theInstallPutsStrippedProgramsPagesCompletionsAndUnitsThatNameThePrefix() throws {
            let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sv-install-\(UUID().uuidString.prefix(8))").path
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let prefix = scratch + "/prefix"
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = scratch + "/home"
            environment["XDG_CONFIG_HOME"] = scratch + "/config"
            let buildDir = (CLIHarness.executable as NSString).deletingLastPathComponent
            let (status, out, err) = try Subprocess.run(
                ["/bin/bash", CLIHarness.repository + "/scripts/install", "--prefix", prefix, "--build-dir", buildDir],
                environment: environment, input: Data())
            try #require(status == 0, "\(String(decoding: err, as: UTF8.self))")
            #expect(String(decoding: out, as: UTF8.self).contains("systemd user units: \(scratch)/config/systemd/user"))

            for program in PackageTests.programs + PackageTests.fleetPrograms {
                let (_, sections, _) = try PackageTests.tool(["/usr/bin/readelf", "-S", prefix + "/bin/" + program])
                #expect(!sections.contains(".symtab") && !sections.contains(".debug_info"), "\(program) is not stripped")
            }
            let version = try Subprocess.run([prefix + "/bin/sortedvault", "--version"], environment: environment, input: Data())
            #expect(version.0 == 0)
            for helper in PackageTests.helpers {
                #expect(try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/bin/" + helper) == "sortedvault-cli")
            }
            // Run by its link's name, sortedvault-cli is the helper.
            let docker = try Subprocess.run([prefix + "/bin/docker-credential-sortedvault", "version"], environment: environment, input: Data())
            #expect(docker.0 == 0 && String(decoding: docker.1, as: UTF8.self) == "docker-credential-sortedvault (sortedvault) 0.1.0\n")
            for path in ["share/man/man1/sortedvault.1", "share/man/man1/sortedvault-store.1", "share/man/man1/sortedvault-daemon.1",
                         "share/man/man1/docker-credential-sortedvault.1", "share/bash-completion/completions/sortedvault",
                         "share/zsh/site-functions/_sortedvault", "share/fish/vendor_completions.d/sortedvault.fish"] {
                #expect(FileManager.default.fileExists(atPath: prefix + "/" + path), "\(path)")
            }
            let service = try String(contentsOfFile: scratch + "/config/systemd/user/sortedvault.service", encoding: .utf8)
            #expect(service.contains("\nExecStart=\(prefix)/bin/sortedvault daemon\n"))
            #expect(FileManager.default.fileExists(atPath: scratch + "/config/systemd/user/sortedvault.socket"))
        }
    }
}
