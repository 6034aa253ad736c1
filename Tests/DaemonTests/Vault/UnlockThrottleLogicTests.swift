import Foundation
import Testing
@testable import VaultDaemon
import VaultTesting

/// The throttle's rules on a manual clock: one attempt in flight per peer, waits that double per
/// peer, and peers that never wait for each other.
@Suite(.timeLimit(.minutes(20))) struct UnlockThrottleLogicTests {
    private let owner = UnlockThrottle.Peer(uid: 1000, pid: 1)
    private let flooder = UnlockThrottle.Peer(uid: 1000, pid: 2)

    @Test func aPeerWithAnAttemptInFlightIsRefusedUntilItSettles() throws {
        let throttle = UnlockThrottle(clock: ManualClock())
        let attempt = try #require(throttle.reserve(for: flooder))
        #expect(throttle.reserve(for: flooder) == nil)
        #expect(throttle.retryAfter(for: flooder) >= 1)
        throttle.settle(attempt, succeeded: true)
        #expect(throttle.reserve(for: flooder) != nil)
    }

    @Test func failuresDoubleThePeersWaitUpToTheMaximum() throws {
        let clock = ManualClock()
        let throttle = UnlockThrottle(clock: clock, base: 1, maximum: 60)
        var waits: [TimeInterval] = []
        for _ in 0..<8 {
            let attempt = try #require(throttle.reserve(for: flooder), "refused before its wait was over")
            throttle.settle(attempt, succeeded: false)
            let wait = throttle.retryAfter(for: flooder)
            waits.append(wait)
            #expect(throttle.reserve(for: flooder) == nil)
            clock.advance(by: wait)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60])
    }

    @Test func oneClientsFailuresNeverMakeAnotherWait() throws {
        let throttle = UnlockThrottle(clock: ManualClock())
        for _ in 0..<3 {
            if let attempt = throttle.reserve(for: flooder) { throttle.settle(attempt, succeeded: false) }
        }
        let held = try #require(throttle.reserve(for: owner))
        #expect(throttle.retryAfter(for: owner) >= 0)
        throttle.settle(held, succeeded: true)
        #expect(throttle.reserve(for: flooder) == nil)
    }

    @Test func anAttemptThatNeverReachedTheCheckCostsNothing() throws {
        let throttle = UnlockThrottle(clock: ManualClock())
        throttle.release(try #require(throttle.reserve(for: flooder)))
        #expect(throttle.reserve(for: flooder) != nil)
    }

    @Test func memoryStaysBoundedByForgettingPeersWhoseWaitIsOver() throws {
        let clock = ManualClock()
        let throttle = UnlockThrottle(clock: clock, capacity: 4)
        for pid in Int32(10)..<20 {
            let attempt = try #require(throttle.reserve(for: UnlockThrottle.Peer(uid: 1000, pid: pid)))
            throttle.settle(attempt, succeeded: false)
            clock.advance(by: 1)
        }
        #expect(throttle.trackedPeers <= 4)
    }
}
