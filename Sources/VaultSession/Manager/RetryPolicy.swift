import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// How long to hold back after transient provider failures: exponential, capped, with jitter so
/// that many daemons (or many sessions) do not retry in step.
public struct RetryPolicy: Sendable, Equatable {
    /// The delay after the first failure, before jitter.
    public var base: TimeInterval
    /// The longest delay, before jitter.
    public var cap: TimeInterval

    public init(base: TimeInterval = 2, cap: TimeInterval = 300) {
        self.base = base
        self.cap = cap
    }

    /// The delay after `failures` consecutive failures: half fixed, half random ("equal jitter"),
    /// with `random` in 0..<1.
    public func delay(afterFailures failures: Int, random: Double) -> TimeInterval {
        let exponent = Double(min(max(failures, 1), 32) - 1)
        let ceiling = min(cap, base * pow(2, exponent))
        return ceiling / 2 + ceiling / 2 * min(max(random, 0), 1)
    }
}

/// Consecutive transient failures of one login (or queued revocation), when the background work
/// may try again, and when the last attempt was made (for a client's floor).
struct RetryState: Sendable {
    var failures: Int
    var notBefore: Date
    var lastAttemptAt: Date

    init(failures: Int, notBefore: Date, lastAttemptAt: Date? = nil) {
        self.failures = failures
        self.notBefore = notBefore
        self.lastAttemptAt = lastAttemptAt ?? notBefore
    }
}
