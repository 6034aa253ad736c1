#if DEBUG
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Test hook: the Swift `Clock` of a ``FileClock``. Its sleeps end once the time written in the
/// file reaches their deadline, so a test moves a daemon process's timers (auto-lock, the socket
/// check) by advancing the file, and never waits for real minutes. Only
/// `sortedvault daemon --unsafe-clock-file PATH` uses it, in test (debug) builds; the daemon
/// otherwise sleeps on `ContinuousClock`.
public struct FileSleepClock: Clock {
    public struct Instant: InstantProtocol {
        /// Time since 1970, as the file says.
        public var sinceEpoch: Swift.Duration

        public func advanced(by duration: Swift.Duration) -> Instant { Instant(sinceEpoch: sinceEpoch + duration) }
        public func duration(to other: Instant) -> Swift.Duration { other.sinceEpoch - sinceEpoch }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }
    }

    public let file: FileClock
    /// How often a sleeper reads the file, in real time.
    public var pollInterval: Swift.Duration

    public init(file: FileClock, pollInterval: Swift.Duration = .milliseconds(20)) {
        self.file = file
        self.pollInterval = pollInterval
    }

    public var now: Instant { Instant(sinceEpoch: .seconds(file.now.timeIntervalSince1970)) }
    public var minimumResolution: Swift.Duration { .milliseconds(1) }

    public func sleep(until deadline: Instant, tolerance: Swift.Duration?) async throws {
        while now < deadline {
            try await Task.sleep(for: pollInterval)
        }
    }
}
#endif
