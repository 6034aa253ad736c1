import Foundation
import TestSupport
import Testing
import VaultClient
import VaultCore

extension DaemonSuite {
    /// The operators' endpoint of a one-host daemon (SQLite), scraped over its Unix socket: what the
    /// session manager reports is there, and the backlog equals what `fleet status` says.
    @Suite struct MetricsEndpointTests {
        typealias World = SessionDaemonTests.World

        @Test func aRefreshMovesItsCounterAndTheBacklogGaugeEqualsFleetStatus() async throws {
            let directory = try Self.socketDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let socket = directory + "/metrics.sock"
            let world = try World(settings: "[metrics]\nlisten = \"unix:\(socket)\"\n")
            defer { world.cli.stopDaemon() }
            let refreshed = "sortedvault_refreshes_total{outcome=\"refreshed\"}"

            try await world.signIn()
            let before = try LoopbackHTTP.get(unixSocket: socket, "/metrics")
            #expect(before.status == "HTTP/1.1 200 OK", "\(before.response)")
            #expect(PrometheusText.value(of: refreshed, in: before.response) == nil, "\(before.response)")

            world.clock.advance(by: 3600)  // the access token has expired
            let outcome = try await world.sessions.autoLogin(world.key)
            guard case .refreshed = outcome else {
                Issue.record("AutoLogin of an expired login answered \(outcome.outcome), not refreshed")
                return
            }
            let after = try LoopbackHTTP.get(unixSocket: socket, "/metrics").response
            #expect(PrometheusText.value(of: refreshed, in: after) == 1, "\(after)")

            // The provider is down: the logout's revocation stays queued.
            world.provider.stop()
            let revoked = try world.cli.run(["fleet", "revoke", "--service", world.key.service])
            #expect(revoked.status == 0, "\(revoked.stderr)")
            let status = try await world.sessions.fleetStatus()
            world.clock.advance(by: 5)  // the store's gauges in a scrape are at most 5 s old (StoreFigureCache)
            let scrape = try LoopbackHTTP.get(unixSocket: socket, "/metrics").response
            #expect(status.revocations.pending == 1)
            #expect(PrometheusText.value(of: "sortedvault_revocations_pending", in: scrape) == Double(status.revocations.pending), "\(scrape)")
            #expect(PrometheusText.value(of: "sortedvault_logins_in_doubt", in: scrape) == Double(status.loginsInDoubt), "\(scrape)")
        }

        @Test func onlyGetMetricsIsServedAndRequestsAreBounded() async throws {
            let directory = try Self.socketDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let socket = directory + "/metrics.sock"
            let world = try World(settings: "[metrics]\nlisten = \"unix:\(socket)\"\n")
            defer { world.cli.stopDaemon() }
            let other = try LoopbackHTTP.get(unixSocket: socket, "/")
            #expect(other.status == "HTTP/1.1 404 Not Found", "\(other.response)")
            let post = try LoopbackHTTP.send(unixSocket: socket, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx")
            #expect(post.status == "HTTP/1.1 400 Bad Request", "\(post.response)")
            let padding = String(repeating: "a", count: 9 * 1024)
            let large = try LoopbackHTTP.send(unixSocket: socket, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: \(padding)\r\n\r\n")
            #expect(large.status == "HTTP/1.1 400 Bad Request", "a request head over 8 KiB: \(large.status)")
            let head = try LoopbackHTTP.send(unixSocket: socket, "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            #expect(head.status == "HTTP/1.1 200 OK" && head.response.hasSuffix("\r\n\r\n"), "\(head.response)")
            let attributes = try FileManager.default.attributesOfItem(atPath: socket)
            #expect((attributes[.posixPermissions] as? Int).map { $0 & 0o077 } == 0, "the metrics socket is open to other users")
        }

        /// A second daemon given the same socket path refuses to start rather than take the first one's endpoint.
        @Test func aSocketPathAnotherDaemonServesIsNotTaken() async throws {
            let directory = try Self.socketDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let socket = directory + "/metrics.sock"
            let first = try World(settings: "[metrics]\nlisten = \"unix:\(socket)\"\n")
            defer { first.cli.stopDaemon() }
            let second = try CLIHarness()
            defer { second.stopDaemon() }
            try second.initKeyFileVault()
            try second.writePolicy(settings: "[metrics]\nlisten = \"unix:\(socket)\"\n")
            let error = "\(try #require(throws: HarnessError.self) { try second.startDaemon() })"
            #expect(error.contains("another process serves metrics at unix:\(socket)"), "\(error)")
            #expect(try LoopbackHTTP.get(unixSocket: socket, "/metrics").status == "HTTP/1.1 200 OK", "the first daemon lost its endpoint")
        }

        @Test func aNonLoopbackAddressStopsStartUpSayingWhatToWrite() throws {
            let cli = try CLIHarness()
            defer { cli.stopDaemon() }
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "[metrics]\nlisten = \"0.0.0.0:9464\"\n")
            let error = "\(try #require(throws: HarnessError.self) { try cli.startDaemon() })"
            #expect(error.contains("is not a loopback address") && error.contains("127.0.0.1:9464") && error.contains("unix:/"), "\(error)")
        }

        /// A private directory under /tmp: the socket path must stay short (sun_path).
        static func socketDirectory() throws -> String {
            let path = FileManager.default.temporaryDirectory.path + "/sv-metrics-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            return path
        }
    }
}
