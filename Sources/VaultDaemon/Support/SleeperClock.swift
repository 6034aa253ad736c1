/// The daemon keeps its sleeper as `any Clock<Duration>` (the real `ContinuousClock`, or a
/// ``FileSleepClock`` under test); this opens it for `sleep(for:)`.
enum SleeperClock {
    /// Sleeps `duration` on `clock`; throws `CancellationError` when the task is cancelled.
    static func sleep<C: Clock>(for duration: Duration, on clock: C) async throws where C.Duration == Duration {
        try await clock.sleep(for: duration)
    }
}
