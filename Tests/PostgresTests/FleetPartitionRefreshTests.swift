import Foundation
import Testing
import TestSupport
import VaultClient
import VaultCore
import VaultSession

extension PostgresSuite {
    /// Issue 22's scenario 4, a partition in the middle of a refresh, with real daemons. PostgreSQL
    /// runs in a network namespace: daemon A reaches it over TLS on a veth link, daemon B over its
    /// Unix socket. A claims a login's refresh lease and sends the refresh; the provider rotates the
    /// refresh token and holds its answer; the link is cut in silence (no FIN, no RST); the answer
    /// then reaches A, which cannot write it. A's caller is answered `offline` by the call deadline
    /// while the link is still down (a silent link ends no call by itself). B takes the login over
    /// once A's lease has run out and makes the one retry with the same refresh token. When the link
    /// comes back, A's late commit is fenced by B's lease: A's tokens are never stored and A revokes
    /// them at the provider.
    @Suite(.enabled(if: CIRequirement.runs(where: NetworkPartition.available), Comment(rawValue: NetworkPartition.missing)))
    struct FleetPartitionRefreshTests {
        @Test func aDaemonCutOffMidRefreshAnswersItsCallerAnotherTakesOverAndItsLateCommitIsFenced() async throws {
            let remote = try PartitionedPostgres()
            defer { remote.stop() }
            let link = remote.link
            // A must get the held answer: a provider deadline (real time) longer than a busy machine
            // takes from the provider's rotation to the cut. A request that ran out first is an
            // answer lost before the cut, whose tokens A never sees and so cannot revoke (on a loaded
            // CI machine A then gave its lease back before the link went down). The test ends the
            // leases itself, so their length (twice this deadline) does not matter.
            let fleet = try FleetDaemons(count: 2, database: FleetDatabase(server: remote.server, name: try remote.server.createDatabase()),
                                         callDeadlineSeconds: 5, providerDeadlineSeconds: 300, start: false)
            defer { fleet.stopAll() }
            try fleet.reachOverTLS(0, host: link.namespaceAddress, caFile: remote.caFile)
            try fleet.start(0)
            try fleet.start(1)
            let (a, b) = (fleet.sessions(0), fleet.sessions(1))

            let provider = try OAuthTestProvider()
            let key = FleetDaemonTests.key
            _ = try await FleetDaemonTests.signIn(b, provider)
            let signInTokens = Set(try await provider.issuedTokens())
            fleet.clock.advance(by: 3600)

            // A's refresh: the provider rotates the refresh token, then holds its answer.
            try await provider.delay(seconds: 600)
            let refreshing = Task { try await a.autoLogin(key) }
            try await hangGuard {
                while try await provider.refreshResponses(200) < 1 { try await Task.sleep(for: .milliseconds(20)) }
            }
            let answerTokens = Set(try await provider.issuedTokens()).subtracting(signInTokens)
            #expect(answerTokens.count == 2, "the held answer's access and refresh tokens")

            try link.cut()
            try await provider.delay(seconds: 0)
            // The daemons' clock runs a call deadline and more every 200 ms until A has answered; it
            // stands still otherwise, so no call on a connected path meets its deadline.
            let ticker = Task {
                while !Task.isCancelled {
                    fleet.clock.advance(by: TimeInterval(fleet.callDeadlineSeconds + 1))
                    try? await Task.sleep(for: .milliseconds(200))
                }
            }
            let answered = try await hangGuard(seconds: 600) { try await refreshing.value }
            ticker.cancel()
            _ = await ticker.result
            guard case .offline = answered else {
                Issue.record("A, cut off from the database, answered \(answered.outcome), not offline")
                return
            }

            // End A's lease, as its running out would: A's claim is still the row's.
            #expect(try await FleetKillSweepTests.endLeases(fleet.database) == 1, "A's claim left no lease")
            let takeover = try await hangGuard(seconds: 600) { try await b.autoLogin(key) }
            switch takeover {
            case .refreshed: break
            case .reauthRequired(let reason): #expect(reason == .rotationInDoubt, "\(takeover)")
            default: Issue.record("B, taking over, answered \(takeover.outcome): neither refreshed nor rotationInDoubt")
            }
            #expect(try await provider.refreshRequests() == 2, "A's request and B's one retry")

            // The link comes back: A writes what it kept, under its old lease, and is fenced.
            try link.restore()
            let revoked = try await hangGuard(seconds: 600) { () -> [String: Int] in
                while true {
                    fleet.clock.advance(by: 2)
                    let revoked = try await provider.revokedTokens()
                    if answerTokens.allSatisfy({ revoked[$0] != nil }) { return revoked }
                    try await Task.sleep(for: .milliseconds(250))
                }
            }
            // A few more rounds: nothing is written or revoked twice.
            for _ in 0..<4 {
                fleet.clock.advance(by: 2)
                try await Task.sleep(for: .milliseconds(250))
            }
            let after = try await provider.revokedTokens()
            for token in answerTokens { #expect(after[token] == 1, "A's token was revoked \(after[token] ?? 0) times") }
            #expect(try await provider.refreshRequests() == 2, "a third refresh request")
            for (name, sessions) in [("A", a), ("B", b)] {
                let result = try await hangGuard(seconds: 600) { try await sessions.autoLogin(key) }
                switch (takeover, result) {
                case (.refreshed(let taken), .valid(let grant)):
                    #expect(grant.accessToken == taken.accessToken, "\(name) does not answer B's tokens")
                case (.reauthRequired, .reauthRequired): break
                default: Issue.record("\(name) answered \(result.outcome) after B's takeover answered \(takeover.outcome)")
                }
            }
            print("fleet partition mid-refresh: A answered \(answered.outcome), B \(takeover.outcome), "
                  + "\(try await provider.refreshRequests()) refresh requests, A's answer revoked \(answerTokens.map { revoked[$0] ?? 0 })")
        }
    }
}
