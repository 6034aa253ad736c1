import Foundation
import Synchronization
import Testing
import SortedVault
import TestSupport
import VaultTesting

/// The loopback receiver against local processes that are not the browser (issue 34, points 2 and
/// 5): requests without this sign-in's state do not end the wait, and a connection that never
/// finishes its request does not hold the real callback back.
@Suite(.timeLimit(.minutes(20))) struct SignInReceiverTests {
    typealias Base = SignInTests

    /// A local process trickling a request one byte a second does not hold the receiver: the real
    /// callback completes while that connection is still open.
    @Test func aSlowClientDoesNotDelayTheRealCallback() async throws {
        let rig = try Base.Rig()
        let reached = Mutex<Task<(Int, Bool, SlowLorisClient), any Error>?>(nil)
        let status = try await rig.login.signIn(provider: Base.provider, timeout: 120, opener: .loopback { url in
            reached.withLock { $0 = Task {
                let redirect = try #require(Base.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
                let state = try #require(Base.parameter("state", of: url))
                let port = try #require(redirect.port)
                let client = try SlowLorisClient(port: port, start: "GET \(redirect.path)?code=")
                // The slow connection is accepted first: wait until it has trickled a byte past the first.
                let guardTime = ContinuousClock.now + .seconds(60)
                while client.trickled < 2 && ContinuousClock.now < guardTime { try await Task.sleep(for: .milliseconds(50)) }
                try #require(client.trickled >= 2, "the slow client got no byte through in 60 s")
                let answer = try await Base.get(port: port, redirect.path + "?code=the-code&state=\(state)")
                let open = client.isOpen
                return (answer, open, client)
            } }
        })
        #expect(status.state == "valid")
        let (answer, slowStillOpen, client) = try await #require(reached.withLock { $0 }).value
        let trickled = client.trickled
        client.stop()
        #expect(answer == 200, "the real callback was answered (a 0 is the test client's 60 s read timeout: it waited behind the slow one)")
        #expect(slowStillOpen, "the real callback completed while the slow client (\(trickled) bytes trickled) was still connected")
    }
}
