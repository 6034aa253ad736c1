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
        let signIn = Task {
            try await rig.login.signIn(provider: Base.provider, timeout: 120, opener: .loopback { url in
                reached.withLock { $0 = Task {
                    let redirect = try #require(Base.parameter("redirect_uri", of: url).flatMap(URLComponents.init(string:)))
                    let state = try #require(Base.parameter("state", of: url))
                    let port = try #require(redirect.port)
                    let client = try SlowLorisClient(port: port, start: "GET \(redirect.path)?code=")
                    // The slow connection is accepted first: wait until it has trickled a byte past the first.
                    try await waitUntil("the slow client to trickle a second byte, or be closed") { client.trickled >= 2 || !client.isOpen }
                    try #require(client.trickled >= 2, "the receiver closed the slow client after \(client.trickled) byte(s)")
                    let answer = try await Base.get(port: port, redirect.path + "?code=the-code&state=\(state)")
                    let open = client.isOpen
                    return (answer, open, client)
                } }
            })
        }
        // The browser's side, once the sign-in has shown its address; if it fails, the sign-in (whose
        // timeout is on the manual clock) is cancelled rather than left waiting for a callback.
        try await waitUntil("the sign-in to show its address") { reached.withLock { $0 } != nil }
        let browserTask = try #require(reached.withLock { $0 })
        let browser = await browserTask.result
        if case .failure = browser { signIn.cancel() }
        let (answer, slowStillOpen, client) = try browser.get()
        let status = try await signIn.value
        #expect(status.state == "valid")
        let trickled = client.trickled
        client.stop()
        #expect(answer == 200, "the real callback was answered (a 0 is the test client's read timeout: it waited behind the slow one)")
        #expect(slowStillOpen, "the real callback completed while the slow client (\(trickled) bytes trickled) was still connected")
    }
}
