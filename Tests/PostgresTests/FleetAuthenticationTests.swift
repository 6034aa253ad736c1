import Foundation
import Logging
import PostgresNIO
import Testing
import TestSupport
import VaultCore
import VaultPostgres

extension PostgresSuite {
    /// The database password goes only to a server whose certificate the daemon verified: postgres-nio
    /// answers any authentication request, the cleartext one included, so every TCP host — loopback
    /// too — is reached over TLS, and a process that binds the port cannot ask for the password.
    /// The files that decide whom the daemon trusts are checked before they are read.
    @Suite struct FleetAuthenticationTests {
        @Test(arguments: [Int32(3), Int32(5)])
        func aFakeServerOnALoopbackPortNeverGetsThePassword(authenticationCode: Int32) async throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let password = "fleet-db-password-\(UUID().uuidString)"
            let catcher = try PasswordCatcher(authenticationCode: authenticationCode)
            let settings = PostgresSettings(endpoint: .tcp(host: "127.0.0.1"), port: catcher.port, database: "sortedvault",
                                            user: "sortedvault", passwordFile: try writePasswordFile(password, in: directory),
                                            trustRootsFile: try makeCAFile(in: directory))
            // The listening connection, made alone (as a daemon that cannot open the database does).
            async let listening = catcher.nextClient()
            let configuration = try settings.listenConfiguration()
            await #expect(throws: (any Error).self) {
                try await configuration.checkConnection(deadline: .seconds(120), logger: Logger(label: "test"))
            }
            expectNoPassword(try await listening, password)

            // The pool's connections.
            let client = PostgresClient(configuration: try settings.clientConfiguration())
            let pooled = try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                group.addTask { try await client.withConnection { _ in } }
                defer { group.cancelAll() }
                return try await catcher.nextClient()
            }
            expectNoPassword(pooled, password)
        }

        @Test func aLoopbackHostWithoutACAFileIsRefused() throws {
            let settings = PostgresSettings(endpoint: .tcp(host: "127.0.0.1"), database: "d", user: "u")
            let refused = "\(try #require(throws: VaultError.self) { try settings.clientConfiguration() })"
            #expect(refused.contains("ca_file") && refused.contains("socket_directory"), "\(refused)")
            #expect(throws: VaultError.self) { try settings.listenConfiguration() }
        }

        @Test func aCAFileOthersCanChangeIsRefused() throws {
            let directory = try temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let ca = try makeCAFile(in: directory)
            let link = directory + "/ca-link.crt"
            symlink(ca, link)
            func refusal(_ path: String) -> String? {
                let settings = PostgresSettings(endpoint: .tcp(host: "db.example.com"), database: "d", user: "u", trustRootsFile: path)
                do {
                    _ = try settings.clientConfiguration()
                    _ = try settings.listenConfiguration()
                    return nil
                } catch {
                    return "\(error)"
                }
            }
            #expect(refusal(ca) == nil, "a CA file of the daemon's user, mode 0644, is refused: \(refusal(ca) ?? "")")
            #expect(refusal(link)?.contains("symlink") == true, "\(refusal(link) ?? "accepted")")
            chmod(ca, 0o666)
            #expect(refusal(ca)?.contains("writable by group or others (mode 666)") == true, "\(refusal(ca) ?? "accepted")")
            chmod(ca, 0o664)
            #expect(refusal(ca)?.contains("writable by group or others") == true, "\(refusal(ca) ?? "accepted")")
            chmod(ca, 0o644)
            let other: uid_t = geteuid() == 65534 ? 65533 : 65534
            guard chown(ca, other, gid_t(other)) == 0 else {
                // Only root gives a file away; as another user, another user's file is what /etc/hostname is.
                #expect(refusal("/etc/hostname")?.contains("belongs to uid") == true || geteuid() == 0)
                return
            }
            #expect(refusal(ca)?.contains("belongs to uid \(other)") == true, "\(refusal(ca) ?? "accepted")")
        }

        private func expectNoPassword(_ capture: PasswordCatcher.Capture, _ password: String,
                                      sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(capture.askedForTLS, "the client did not ask for TLS first", sourceLocation: sourceLocation)
            #expect(!capture.sentStartup, "the client sent its start-up message without TLS", sourceLocation: sourceLocation)
            #expect(!capture.messageTypes.contains(UInt8(ascii: "p")), "the client answered the password request", sourceLocation: sourceLocation)
            #expect(!contains(capture.bytes, Array(password.utf8)), "the fake server received the password", sourceLocation: sourceLocation)
        }

        private func writePasswordFile(_ password: String, in directory: String) throws -> String {
            let path = directory + "/db-password"
            try (password + "\n").write(toFile: path, atomically: false, encoding: .utf8)
            chmod(path, 0o600)
            return path
        }
    }
}
