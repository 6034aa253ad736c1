import BoundedJSON
import Foundation
import NIOPosix
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

extension PostgresSuite {
    /// Issue 22's contention scenario: three real daemons on one database, many clients each asking
    /// AutoLogin of expired logins on one of them, against a strict provider (django-oauth-toolkit,
    /// which rejects a reused refresh token) and a graceful one (the GoTrue stand-in, which would
    /// answer a second refresh within its reuse interval and so hide it: there the count of requests
    /// per refresh token tells). Exactly one refresh per login across the fleet: as many refresh
    /// requests as logins, each refresh token sent once, no `invalid_grant`, one access token per login.
    ///
    /// Sized for CI; `scripts/fleet-contention` runs the full size (300 logins, 32 clients per daemon)
    /// through `SORTEDVAULT_FLEET_CONTENTION=LOGINS,CLIENTS_PER_DAEMON`.
    @Suite(.serialized) struct FleetContentionTests {   // one provider at a time: each case loads both cores
        struct Size {
            var logins = 30
            var clientsPerDaemon = 8

            static var current: Size {
                guard let text = ProcessInfo.processInfo.environment["SORTEDVAULT_FLEET_CONTENTION"] else { return Size() }
                let parts = text.split(separator: ",").compactMap { Int($0) }
                guard parts.count == 2, parts.allSatisfy({ $0 > 0 }) else { return Size() }
                return Size(logins: parts[0], clientsPerDaemon: parts[1])
            }
        }

        struct Answer: Sendable {
            let login: Int
            let outcome: String
            let token: String?
            let error: String?
        }

        @Test(arguments: FleetProvider.allCases)
        func expiredLoginsAskedThroughThreeDaemonsAreEachRefreshedExactlyOnce(_ kind: FleetProvider) async throws {
            let size = Size.current
            let fleet = try FleetDaemons(count: 3, database: try FleetDatabase.fresh())
            defer { fleet.stopAll() }
            let provider = try kind.start()
            let keys = try (0..<size.logins).map { try ItemKey(service: "com.sorted.api", account: "user-\($0)") }
            for (index, key) in keys.enumerated() {
                _ = try await FleetDaemonTests.signIn(fleet.sessions(index % 3), provider, key: key)
            }
            fleet.clock.advance(by: 3600)  // every access token has expired, on every daemon's clock
            let refreshesBefore = try await provider.refreshRequests()

            // Blocking socket calls: one thread per client, so the clients really run at once.
            let clients = 3 * size.clientsPerDaemon
            let threadPool = NIOThreadPool(numberOfThreads: clients)
            threadPool.start()
            let started = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: [Answer].self) { group in
                for client in 0..<clients {
                    let sessions = SessionClient(socketPath: fleet.hosts[client % 3].socket, timeout: .seconds(120), threadPool: threadPool)
                    group.addTask {
                        // Every login, in an order of this client's own: each login is asked by every
                        // client of every daemon, at different moments.
                        var answers: [Answer] = []
                        for login in (0..<keys.count).shuffled() {
                            do {
                                let result = try await sessions.autoLogin(keys[login])
                                let token: String? = switch result {
                                case .valid(let grant), .refreshed(let grant): grant.accessToken.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
                                default: nil
                                }
                                answers.append(Answer(login: login, outcome: result.outcome, token: token, error: nil))
                            } catch {
                                answers.append(Answer(login: login, outcome: "error", token: nil, error: "\(error)"))
                            }
                        }
                        return answers
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
            let elapsed = ContinuousClock.now - started
            try await threadPool.shutdownGracefully()

            let errors = answers.compactMap(\.error)
            #expect(errors.isEmpty, "\(errors.count) calls failed, the first: \(errors.first ?? "")")
            let unexpected = answers.filter { $0.outcome != "refreshed" && $0.outcome != "valid" }
            #expect(unexpected.isEmpty, "\(unexpected.count) answers were neither refreshed nor valid: \(unexpected.prefix(3).map(\.outcome))")
            let tokensPerLogin = Dictionary(grouping: answers, by: \.login).mapValues { Set($0.compactMap(\.token)) }
            let split = tokensPerLogin.filter { $0.value.count != 1 }
            #expect(split.isEmpty, "\(split.count) logins gave their callers different (or no) access tokens")
            if !split.isEmpty || !unexpected.isEmpty {
                // What the daemons said about it, for the failure's report.
                for (index, host) in fleet.hosts.enumerated() {
                    let lines = host.daemonOutput().split(separator: "\n").filter { $0.contains("warning") || $0.contains("error") || $0.contains("notice") }
                    print("daemon \(index): \(lines.count) warnings or errors; the first: \(lines.prefix(8).joined(separator: "\n"))")
                }
            }
            let refreshes = try await provider.refreshRequests() - refreshesBefore
            let invalidGrants = try await provider.refreshResponses(400)
            #expect(refreshes == size.logins, "the provider saw \(refreshes) refresh requests for \(size.logins) logins")
            #expect(invalidGrants == 0)
            let perToken = try await provider.refreshesPerToken()
            #expect(perToken.count == size.logins && perToken.values.allSatisfy { $0 == 1 },
                    "refresh tokens sent more than once: \(perToken.values.filter { $0 > 1 }.count) of \(perToken.count)")
            print("fleet contention (\(kind)): \(size.logins) logins, 3 daemons × \(size.clientsPerDaemon) clients, \(answers.count) AutoLogin calls in \(elapsed): \(refreshes) refresh requests at the provider, \(invalidGrants) invalid_grant, \(answers.filter { $0.outcome == "refreshed" }.count) answers refreshed, \(answers.filter { $0.outcome == "valid" }.count) valid, \(errors.count) errors, \(split.count) logins with more than one token")
        }
    }
}
