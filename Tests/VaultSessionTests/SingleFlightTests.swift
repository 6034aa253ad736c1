import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// However many callers ask at once, one login makes one refresh request.
@Suite(.timeLimit(.minutes(20))) struct SingleFlightTests {
    @Test func fiftyConcurrentAutoLoginsShareOneHeldRefresh() async throws {
        let h = try SessionHarness([.tokens(access: "A2", refresh: "R2")])
        try await h.signIn()
        h.clock.advance(by: 3601)
        h.transport.hold()
        let sessions = h.sessions, key = h.key, transport = h.transport
        let results = try await withThrowingTaskGroup(of: AutoLoginResult.self) { group in
            for _ in 0..<50 {
                group.addTask { try await sessions.autoLogin(key) }
            }
            // The refresh is now in flight and cannot finish until released. Yielding lets the other
            // callers reach it; the assertions below hold however many of them got there first.
            await transport.waitForRequests(1)
            for _ in 0..<500 { await Task.yield() }
            #expect(transport.requestCount == 1)
            transport.release()
            var results: [AutoLoginResult] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.count == 50)
        #expect(transport.requestCount == 1)
        #expect(results.allSatisfy { $0.accessToken == "A2" })
        #expect(results.contains { $0.outcome == "refreshed" })
        #expect(results.allSatisfy { $0.outcome == "refreshed" || $0.outcome == "valid" })
        #expect(text(try await h.storedLogin()?.refreshToken) == "R2")
    }
}
