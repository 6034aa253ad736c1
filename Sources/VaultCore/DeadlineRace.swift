import VaultCrypto

/// An operation raced against a deadline on an injected clock and the caller's cancellation: the
/// first of the three to finish answers the caller, once, and the other tasks are cancelled. The
/// losing operation is cancelled but never awaited: a task group would wait for it, and an operation
/// that ignores cancellation (a query on a silent connection, a refresh another daemon holds) is the
/// hang this exists to end.
///
/// ```swift
/// let answer = try await DeadlineRace.run(limit: .seconds(5), clock: ContinuousClock()) {
///     try await server.call()
/// } atDeadline: {
///     .failure(VaultError(.unavailable, "the server did not answer within 5 s; try again"))
/// }
/// ```
///
/// Every deadline is this race, with its own answer at the deadline: the database's call
/// deadline (`DatabaseDeadline`), the daemon's answer deadline (`AnswerDeadline`), a provider
/// request's (`ProviderHTTPClient`), the desktop keyring's wait (`NonInteractiveUnlock`) and an
/// app's sign-in timeout (`VaultLogin.signIn`).
public enum DeadlineRace {
    /// `operation`'s answer (its error passed through `translate`), or `atDeadline()`'s once `limit`
    /// has passed on `clock`; cancelling the caller cancels the operation and throws `CancellationError`.
    /// `cancelAtDeadline`: whether the deadline cancels the operation too (false: it goes on, and
    /// only the caller stops waiting for it).
    public static func run<T: Sendable>(limit: Duration, clock: any Clock<Duration>, cancelAtDeadline: Bool = true,
                                        _ operation: @escaping @Sendable () async throws -> T,
                                        translate: @escaping @Sendable (any Error) -> any Error = { $0 },
                                        atDeadline: @escaping @Sendable () -> Result<T, any Error>) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                race.begin(continuation)
                let work = Task {
                    do { race.finish(.success(try await operation())) }
                    catch { race.finish(.failure(translate(error))) }
                }
                let timer = Task {
                    do { try await sleep(on: clock, for: limit) } catch { return }
                    race.finish(atDeadline(), cancellingOthers: cancelAtDeadline)
                }
                race.track(work, timer)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// Waits `duration` on `clock`.
    public static func sleep<C: Clock<Duration>>(on clock: C, for duration: Duration) async throws {
        try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
    }
}

/// The first of the operation, the timer and the caller's cancellation to finish resumes the caller
/// once (kept when it comes before the caller waits); the other tasks are then cancelled, unless told.
private final class Race<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var outcome: Result<T, any Error>?
        var tasks: [Task<Void, Never>] = []
    }
    private let state = Locked(State())

    func begin(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLock { state -> Result<T, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early { continuation.resume(with: early) }
    }

    func track(_ tasks: Task<Void, Never>...) {
        let finished = state.withLock { state -> Bool in
            state.tasks = tasks
            return state.outcome != nil
        }
        if finished { tasks.forEach { $0.cancel() } }
    }

    func finish(_ outcome: Result<T, any Error>, cancellingOthers: Bool = true) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: outcome)
        if cancellingOthers { tasks.forEach { $0.cancel() } }
    }
}
