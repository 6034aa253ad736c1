import Foundation
import Testing
import VaultSession

@Suite(.timeLimit(.minutes(20))) struct RetryPolicyTests {
    @Test func delaysStayBetweenHalfTheCeilingAndTheCeiling() {
        let policy = RetryPolicy(base: 2, cap: 300)
        for failures in 1...40 {
            let ceiling = min(300, 2 * pow(2, Double(failures - 1)))
            for random in [0, 0.1, 0.5, 0.999_999] {
                let delay = policy.delay(afterFailures: failures, random: random)
                #expect(delay >= ceiling / 2 && delay <= ceiling, "failures \(failures), random \(random): \(delay)")
            }
            #expect(policy.delay(afterFailures: failures, random: 0) == ceiling / 2)
        }
    }

    @Test func theDelayDoublesUntilTheCap() {
        let policy = RetryPolicy(base: 2, cap: 300)
        #expect([1, 2, 3, 4].map { policy.delay(afterFailures: $0, random: 1) } == [2, 4, 8, 16])
        #expect(policy.delay(afterFailures: 9, random: 1) == 300)
        #expect(policy.delay(afterFailures: 1_000_000, random: 1) == 300)
    }

    @Test func outOfRangeInputsAreClamped() {
        let policy = RetryPolicy(base: 2, cap: 300)
        #expect(policy.delay(afterFailures: 0, random: 0.5) == policy.delay(afterFailures: 1, random: 0.5))
        #expect(policy.delay(afterFailures: -3, random: 0.5) == 1.5)
        #expect(policy.delay(afterFailures: 1, random: -1) == 1)
        #expect(policy.delay(afterFailures: 1, random: 7) == 2)
    }
}
