import Synchronization
import VaultAPI
import VaultSession

/// Bounds the daemon's answer to AutoLogin and Refresh by ``SessionDeadlines/daemonAnswer``, so a
/// client (which waits ``SessionDeadlines/clientWait``, longer) always hears from the daemon.
///
/// ```swift
/// return .task { .typed(LoginOutcome(try await answerDeadline.bounded { try await sessions.autoLogin(key) })) }
/// ```
///
/// The refresh itself is not cut short: it is the session manager's shared flight, which goes on and
/// stores what the provider answers; only this caller stops waiting for it, and is answered
/// `offline` "ask again" (the next call finds the refresh done, or joins it). The clock is the
/// daemon's `answerClock`: real time, as the client's wait it must come before is.
struct AnswerDeadline: Sendable {
    let limit: Duration
    let clock: any Clock<Duration>

    init(limit: Duration = SessionDeadlines.daemonAnswer, clock: any Clock<Duration>) {
        self.limit = limit
        self.clock = clock
    }

    /// `operation`'s answer, or `offline` once `limit` has passed on `clock`; the operation is
    /// never awaited past the limit (a task group would wait for it), it ends on its own. Cancelling
    /// the caller (its connection closed, the daemon stopping) cancels the operation, as awaiting it
    /// directly would.
    func bounded(_ operation: @escaping @Sendable () async throws -> AutoLoginResult) async throws -> AutoLoginResult {
        let race = FirstAnswer()
        let (limit, clock) = (limit, clock)
        let seconds = limit.components.seconds
        let timer = Task {
            guard (try? await clock.sleep(for: limit)) != nil else { return }
            race.finish(.success(.offline(nil, reason: """
                the refresh has taken more than \(seconds) s (another sortedvault daemon holds it, or the provider is slow) \
                and goes on in the daemon; ask again in a moment
                """)))
        }
        let work = Task {
            let outcome: Result<AutoLoginResult, any Error>
            do { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
            timer.cancel()
            race.finish(outcome)
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { race.wait($0) }
        } onCancel: {
            work.cancel()
            timer.cancel()
            race.finish(.failure(CancellationError()))
        }
    }
}

/// Resumes the caller once, with whichever of the answer, the deadline and a cancellation comes
/// first (kept when it comes before the caller waits).
private final class FirstAnswer: Sendable {
    private struct State {
        var waiter: CheckedContinuation<AutoLoginResult, any Error>?
        var outcome: Result<AutoLoginResult, any Error>?
        var resumed = false
    }
    private let state = Mutex(State())

    func wait(_ continuation: CheckedContinuation<AutoLoginResult, any Error>) {
        let ready = state.withLock { state -> Result<AutoLoginResult, any Error>? in
            guard let outcome = state.outcome else {
                state.waiter = continuation
                return nil
            }
            state.resumed = true
            return outcome
        }
        if let ready { continuation.resume(with: ready) }
    }

    func finish(_ outcome: Result<AutoLoginResult, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<AutoLoginResult, any Error>? in
            guard state.outcome == nil, !state.resumed else { return nil }
            state.outcome = outcome
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.resumed = true
            return waiter
        }
        waiter?.resume(with: outcome)
    }
}
