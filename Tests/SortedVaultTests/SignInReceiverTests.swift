import Foundation
import Testing
import TestSupport
import VaultCrypto
import VaultLoopback
import VaultTesting

/// The loopback receiver against local processes that are not the browser (issue 34, points 2 and
/// 5): a connection that never finishes its request does not hold the real callback back, and is
/// closed once its request deadline has passed.
@Suite(.timeLimit(.minutes(20))) struct SignInReceiverTests {
    typealias Base = SignInTests

    /// A local process trickling a request one byte a second does not hold the receiver: the real
    /// callback is served while that connection is still open. The slow connection's deadline is an
    /// hour, so a receiver that served one connection at a time would answer the real callback only
    /// after it (the test's read gives up after ten minutes and sees status 0); no load on the
    /// machine can close the slow connection before the real callback is served.
    @Test func aSlowClientDoesNotDelayTheRealCallback() async throws {
        let listener = try LoopbackListener(port: 0, path: nil, requestDeadline: .seconds(3600))
        defer { listener.close() }
        let port = Int(listener.port)
        let slow = try SlowLorisClient(port: port, start: "GET \(listener.path)?code=")
        defer { slow.stop() }
        // The slow connection is accepted first: wait until it has trickled a byte past the first.
        try await waitUntil("the slow client to trickle a second byte, or be closed") { slow.trickled >= 2 || !slow.isOpen }
        try #require(slow.trickled >= 2, "the receiver closed the slow client after \(slow.trickled) byte(s)")
        let wake = try WakePipe()
        defer { wake.close() }
        let served = Task {
            try await listener.serve(until: nil, wake: wake.readEnd, shownIn: "the test") { query in
                query.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
        }
        let answer = try await Base.get(port: port, listener.path + "?code=the-code&state=the-state")
        let slowStillOpen = slow.isOpen
        wake.wake()
        let outcome = try await served.value
        #expect(answer == 200, "the real callback was answered (a 0 is the test client's read giving up: it waited behind the slow one)")
        #expect(slowStillOpen, "the real callback was served while the slow client (\(slow.trickled) bytes trickled) was still connected")
        guard case .success(let query) = outcome else {
            Issue.record("the receiver ended without the callback: \(outcome)")
            return
        }
        #expect(query.contains("code=the-code") && query.contains("state=the-state"), "the receiver handed on the real callback's query")
    }

    /// A callback that comes after the receiver has waited longer than a request deadline (the user
    /// took their time at the provider) is served: its deadline counts from its own connection.
    /// The wait is the point of the test: the receiver must have been waiting that long.
    @Test func aCallbackLongAfterTheWaitBeganIsServed() async throws {
        let listener = try LoopbackListener(port: 0, path: nil, requestDeadline: .seconds(3))
        defer { listener.close() }
        let wake = try WakePipe()
        defer { wake.close() }
        let served = Task {
            try await listener.serve(until: nil, wake: wake.readEnd, shownIn: "the test") { query in
                query.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
            }
        }
        try await Task.sleep(for: .seconds(6))   // twice the request deadline, waiting for a connection
        let answer = try await Base.get(port: Int(listener.port), listener.path + "?code=the-code&state=the-state")
        wake.wake()
        let outcome = try await served.value
        #expect(answer == 200, "the callback was answered \(answer) (408: its deadline was counted from before the wait)")
        guard case .success(let query) = outcome else {
            Issue.record("the receiver ended without the callback: \(outcome)")
            return
        }
        #expect(query.contains("code=the-code"))
    }

    /// The other half: a connection whose request does not come within the deadline is answered
    /// 408 and closed, so a slow client costs one slot for a bounded time.
    @Test func aSlowClientIsClosedOnceItsRequestDeadlineHasPassed() async throws {
        let listener = try LoopbackListener(port: 0, path: nil, requestDeadline: .seconds(1))
        defer { listener.close() }
        let slow = try SlowLorisClient(port: Int(listener.port), start: "GET \(listener.path)?code=")
        defer { slow.stop() }
        let wake = try WakePipe()
        defer { wake.close() }
        let served = Task {
            try await listener.serve(until: nil, wake: wake.readEnd, shownIn: "the test") { _ in true }
        }
        try await waitUntil("the receiver to close the slow client") { !slow.isOpen }
        wake.wake()
        guard case .failure(.interrupted) = try await served.value else {
            Issue.record("the receiver served a callback no one sent")
            return
        }
    }
}
