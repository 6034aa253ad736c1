import VaultCrypto
import FoundationEssentials
import Synchronization

/// A Swift `Clock` that shows a ``ManualClock``'s time: a sleep ends only when the test moves the
/// clock to its deadline, so a service that sleeps (a timer, a quiet period) is driven without
/// waiting on real time, and a test can see whether it is asleep.
///
/// ```swift
/// let sleeper = ManualSleepClock()
/// let clock = ManualClock(mirror: sleeper.reach)
/// clock.advance(by: 1.9)   // sleeps due by then end; later ones go on
/// ```
///
/// Build the ``ManualClock`` with `mirror: sleeper.reach`; moving the time any other way leaves
/// the sleepers asleep.
public final class ManualSleepClock: Clock, Sendable {
    public struct Instant: InstantProtocol {
        /// Time since 1970.
        public var sinceEpoch: Duration

        public func advanced(by duration: Duration) -> Instant { Instant(sinceEpoch: sinceEpoch + duration) }
        public func duration(to other: Instant) -> Duration { other.sinceEpoch - sinceEpoch }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }
    }

    private struct State {
        var now: Duration = .zero
        var sleepers: [Int: (deadline: Duration, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var cancelled: Set<Int> = []
        var nextID = 0
        var started = 0
    }

    private let state = Locked(State())

    public init() {}

    public var now: Instant { Instant(sinceEpoch: state.withLock { $0.now }) }
    public var minimumResolution: Duration { .nanoseconds(1) }

    /// Sleeps still waiting for their deadline.
    public var sleeping: Int { state.withLock { $0.sleepers.count } }
    /// Sleeps that have had to wait (a sleep already due returns at once and is not counted).
    public var sleepsStarted: Int { state.withLock { $0.started } }

    /// Returns once at least `count` sleeps wait for their deadline: the event a test needs before it
    /// moves the clock. Throws ``WaitTimedOut`` after `limit` of real time, naming what it waited for,
    /// so a sleep that never starts fails the test instead of hanging it.
    public func waitUntilSleeping(_ count: Int = 1, limit: Duration = .seconds(600),
                                  _ what: @autoclosure () -> String = "a sleep on the manual clock") async throws {
        try await waitUntil(limit: limit, what()) { self.sleeping >= count }
    }

    /// Moves the time to `date` and ends every sleep due by then; pass it as the ``ManualClock``'s mirror.
    @Sendable public func reach(_ date: Date) {
        let time = Self.duration(since1970: date.timeIntervalSince1970)
        let due = state.withLock { state in
            state.now = time
            let due = state.sleepers.filter { $0.value.deadline <= time }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    public func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let answer: Result<Void, any Error>? = state.withLock { state in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline.sinceEpoch <= state.now { return .success(()) }
                    state.sleepers[id] = (deadline.sinceEpoch, continuation)
                    state.started += 1
                    return nil
                }
                if let answer { continuation.resume(with: answer) }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                if let sleeper = state.sleepers.removeValue(forKey: id) { return Optional(sleeper.continuation) }
                state.cancelled.insert(id)
                return nil
            }
            sleeper?.resume(throwing: CancellationError())
        }
    }

    /// Seconds since 1970 as a `Duration`, exact to the millisecond (whole seconds stay exact).
    private static func duration(since1970 seconds: TimeInterval) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
