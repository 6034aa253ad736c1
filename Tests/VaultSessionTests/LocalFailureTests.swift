import Foundation
import Synchronization
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// A refresh that fails on this host before a byte left — the daemon out of descriptors (`EMFILE`
/// from `socket()` or `open()`), of memory or of buffers — is an outage of ours, not a lost answer:
/// the provider cannot have rotated anything, so however often it happens the login stays, and the
/// next request that does go out is no "retry in doubt".
@Suite(.timeLimit(.minutes(20))) struct LocalFailureTests {
    @Test(arguments: [POSIXErrorCode.EMFILE, .ENFILE, .ENOBUFS, .ENOMEM])
    func runningOutOfDescriptorsNeverEndsALogin(_ code: POSIXErrorCode) async throws {
        let failures = Mutex(3)
        let h = try SessionHarness { _, _ in
            ScriptedOAuthTransport { _ in
                if failures.withLock({ left in defer { left -= 1 }; return left > 0 }) { throw POSIXError(code) }
                return .oauthError("invalid_grant")
            }
        }
        try await h.signIn()
        h.clock.advance(by: 3601)
        for attempt in 1...3 {
            let result = try await h.sessions.autoLogin(h.key)
            #expect(result.outcome == "offline", "attempt \(attempt) with \(code) answered \(result)")
            #expect(try await h.storedLogin() != nil, "failure \(attempt) with \(code) before sending ended the login")
            h.clock.advance(by: 3600)  // past any retry delay
        }
        // The provider refuses the first request that reached it: a plain refusal, not `rotationInDoubt`,
        // since no earlier answer was lost.
        #expect(try await h.sessions.autoLogin(h.key).reauthReason == .refreshRejected)
        #expect(h.transport.requestCount == 4)
    }

    /// Other errors a transport throws are still taken as "may have arrived" (the safe side).
    @Test func anUnknownErrorStillCountsAsMaybeArrived() {
        struct Odd: Error {}
        #expect(OAuthClient.requestMayHaveArrived(despite: Odd()))
        #expect(OAuthClient.requestMayHaveArrived(despite: POSIXError(.ECONNRESET)))
        #expect(!OAuthClient.requestMayHaveArrived(despite: POSIXError(.EMFILE)))
        #expect(!OAuthClient.requestMayHaveArrived(despite: OAuthTransportError("down", requestMayHaveArrived: false)))
    }
}
