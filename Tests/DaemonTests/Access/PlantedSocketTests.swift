import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A socket another user planted where a client looks for the daemon receives nothing: every
    /// client checks who serves it (SO_PEERCRED) and who could have put it there (its directory).
    @Suite struct PlantedSocketTests {
        /// A varlink look-alike that records every byte it receives and answers every call with a
        /// made-up secret, run as `user` (nil: this test's own uid) in a directory of its own.
        final class PlantedServer {
            let socket: String
            let received: String
            private let process: Subprocess

            /// Serves `socket` (its directory must exist and be writable by `user`).
            init(as user: String?, socket: String) throws {
                self.socket = socket
                received = socket + ".received"
                let script = """
                    import socket, sys
                    path, log = sys.argv[1], sys.argv[2]
                    open(log, "wb").close()
                    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    server.bind(path)
                    server.listen(16)
                    while True:
                        connection, _ = server.accept()
                        connection.settimeout(5)
                        try:
                            while True:
                                data = connection.recv(65536)
                                if not data:
                                    break
                                with open(log, "ab") as out:
                                    out.write(data)
                                if b"\\0" in data:
                                    connection.sendall(b'{"parameters":{"secret":"UExBTlRFRC1BTlNXRVI=","item":{"service":"s","account":"a"}}}\\0')
                        except OSError:
                            pass
                        connection.close()
                    """
                let prefix = user.map { ["/usr/sbin/runuser", "-u", $0, "--"] } ?? []
                let null = open("/dev/null", O_RDWR | O_CLOEXEC)
                defer { close(null) }
                process = try Subprocess.spawn(prefix + ["/usr/bin/python3", "-c", script, socket, received],
                                               environment: ProcessInfo.processInfo.environment, stdin: null, stdout: null, stderr: null)
                let socketPath = socket
                guard CLIHarness.eventually(within: 600, { access(socketPath, F_OK) == 0 }) else {
                    throw HarnessError("the planted server did not bind \(socket)")
                }
            }

            /// Everything the planted server was sent.
            func bytesReceived() -> Data { FileManager.default.contents(atPath: received) ?? Data() }

            /// The control for "received nothing": run after that check, it sends a call through
            /// `path` (the one the clients were given) and requires the planted server to answer it and
            /// record it. Without it, a recorder that records nothing, or a path the clients never
            /// looked at, would pass the check as well as a client that refused.
            func expectRecordsACallSent(through path: String) throws {
                let call = frame(#"{"method":"org.sortedvault.vault.Retrieve","parameters":{"probe":"planted-control"}}"#)
                let connection = try RawSocket(path: path)
                #expect(connection.send(call) == call.count, "the control call could not be sent through \(path)")
                // The server records what it receives before it answers: once answered, it is recorded.
                let answer = connection.readReply()
                #expect(answer?["parameters"] != nil, "the planted server did not answer the control call sent through \(path)")
                let recorded = bytesReceived()
                #expect(recorded == Data(call),
                        "the planted server did not record the control call: it holds \(String(decoding: recorded, as: UTF8.self).debugDescription)")
            }

            deinit {
                process.signal(SIGKILL)
                _ = process.wait()
            }
        }

        /// Runs every client that sends a secret against `socket` and checks each refuses it.
        func expectEveryClientRefuses(_ cli: CLIHarness, socketDirectory: String, planted: PlantedServer) throws {
            var environment = cli.environment
            environment["XDG_RUNTIME_DIR"] = socketDirectory
            let secret = Data("planted-must-not-see-this".utf8)
            let git = try CLIHarness.sibling("git-credential-sortedvault")
            let docker = try CLIHarness.sibling("docker-credential-sortedvault")
            let fullCLI = try CLIHarness.sibling("sortedvault-cli")
            let runs: [(String, [String], Data)] = [
                ("sortedvault store", [CLIHarness.executable, "store", "s", "a", "--no-autostart"], secret),
                ("sortedvault retrieve", [CLIHarness.executable, "retrieve", "s", "a", "--no-autostart"], Data()),
                ("sortedvault session autologin", [CLIHarness.executable, "session", "autologin", "s", "a", "--no-autostart"], Data()),
                ("sortedvault-cli store", [fullCLI, "store", "s", "a", "--no-autostart"], secret),
                ("sortedvault-cli list", [fullCLI, "list", "--no-autostart"], Data()),
                ("git helper store", [git, "store", "--no-autostart"],
                 Data("protocol=https\nhost=git.example.com\nusername=ada\npassword=planted-must-not-see-this\n\n".utf8)),
                ("git helper get", [git, "get", "--no-autostart"], Data("protocol=https\nhost=git.example.com\n\n".utf8)),
                ("docker helper store", [docker, "store"],
                 Data(#"{"ServerURL":"https://registry.example.com","Username":"ada","Secret":"planted-must-not-see-this"}"#.utf8)),
                ("docker helper get", [docker, "get"], Data("https://registry.example.com\n".utf8)),
            ]
            for (name, argv, input) in runs {
                let (status, out, err) = try Subprocess.run(argv, environment: environment, input: input)
                // docker's helper protocol puts the error on standard output.
                let message = String(decoding: err + (name.hasPrefix("docker") ? out : Data()), as: UTF8.self)
                #expect(status != 0, "\(name) succeeded against the planted socket")
                #expect(message.contains("refusing to use the socket"), "\(name) said: \(message)")
                #expect(out.range(of: Data("PLANTED-ANSWER".utf8)) == nil && out.range(of: Data("UExBTlRFRC1BTlNXRVI=".utf8)) == nil,
                        "\(name) printed the planted server's answer")
                if name.hasPrefix("sortedvault") { #expect(status == 3, "\(name) exited \(status): \(message)") }
            }
            #expect(planted.bytesReceived().isEmpty,
                    "the planted server received: \(String(decoding: planted.bytesReceived(), as: UTF8.self))")
            try planted.expectRecordsACallSent(through: socketDirectory + "/sortedvault/socket")
        }

        /// A server of `nobody`'s on a socket in a directory of theirs, and a runtime directory of
        /// `cli`'s own whose private `sortedvault/socket` links to it: the directory passes, so only
        /// the check of who serves the connection can refuse it. Keep `theirs` alive while used.
        static func plantedBehindOwnLink(_ cli: CLIHarness) throws
            -> (theirs: ReachableDirectory, planted: PlantedServer, runtime: String, uid: uid_t) {
            let theirs = try ReachableDirectory()
            guard let nobody = getpwnam("nobody") else { throw HarnessError("no user nobody") }
            chown(theirs.path, nobody.pointee.pw_uid, nobody.pointee.pw_gid)
            let planted = try PlantedServer(as: "nobody", socket: theirs.path + "/socket")
            let runtime = cli.root + "/planted-run"
            try FileManager.default.createDirectory(atPath: runtime + "/sortedvault", withIntermediateDirectories: true)
            chmod(runtime + "/sortedvault", 0o700)
            try FileManager.default.createSymbolicLink(atPath: runtime + "/sortedvault/socket", withDestinationPath: planted.socket)
            return (theirs, planted, runtime, nobody.pointee.pw_uid)
        }

        @Test func aSocketServedByAnotherUserReceivesNothingFromAnyClient() throws {
            let cli = try CLIHarness()
            let setup = try Self.plantedBehindOwnLink(cli)
            try expectEveryClientRefuses(cli, socketDirectory: setup.runtime, planted: setup.planted)
            withExtendedLifetime(setup.theirs) {}
        }

        @Test func aSocketInADirectoryOthersCanWriteToReceivesNothing() throws {
            let cli = try CLIHarness()
            // Served by this very uid, but from a directory anyone could have put it in (or swap it
            // in later), as a socket under /tmp would be.
            let runtime = cli.root + "/shared-run"
            try FileManager.default.createDirectory(atPath: runtime + "/sortedvault", withIntermediateDirectories: true)
            chmod(runtime + "/sortedvault", 0o1777)
            let planted = try PlantedServer(as: nil, socket: runtime + "/sortedvault/socket")
            try expectEveryClientRefuses(cli, socketDirectory: runtime, planted: planted)
        }

        @Test func theOwnersOwnDaemonIsStillServed() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            #expect(try cli.run(["store", "s", "a"], input: Data("mine".utf8)).status == 0)
            #expect(try cli.run(["retrieve", "s", "a"]).text == "mine")
            cli.stopDaemon()
        }
    }
}
