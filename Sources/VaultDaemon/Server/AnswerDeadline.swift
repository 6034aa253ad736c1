import VaultAPI
import VaultCore
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

    /// `operation`'s answer, or `offline` once `limit` has passed on `clock` (``DeadlineRace``): the
    /// operation is never awaited past the limit, it ends on its own. Cancelling the caller (its
    /// connection closed, the daemon stopping) cancels the operation, as awaiting it directly would.
    func bounded(_ operation: @escaping @Sendable () async throws -> AutoLoginResult) async throws -> AutoLoginResult {
        let seconds = limit.components.seconds
        return try await DeadlineRace.run(limit: limit, clock: clock, cancelAtDeadline: false, operation) {
            .success(.offline(nil, reason: """
                the refresh has taken more than \(seconds) s (another sortedvault daemon holds it, or the provider is slow) \
                and goes on in the daemon; ask again in a moment
                """))
        }
    }
}
