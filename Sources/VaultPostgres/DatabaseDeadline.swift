import VaultCore

/// Bounds every database call by a deadline on an injected clock: postgres-nio has no query timeout
/// (its issues #274, #565, #574), and a server that stops answering would otherwise hold the caller
/// for as long as the kernel keeps the socket.
///
/// ```swift
/// let deadline = DatabaseDeadline(clock: ContinuousClock(), limit: .seconds(5))
/// let rows = try await deadline.run { try await client.query("SELECT 1") }
/// ```
///
/// The call and a sleep on the clock race (``DeadlineRace``); the first to finish answers. The
/// losing call is cancelled but not awaited: a query on a silent connection ignores cancellation
/// until the connection dies. The server's `statement_timeout` and
/// `idle_in_transaction_session_timeout` end its side of an abandoned call.
struct DatabaseDeadline: Sendable {
    let clock: any Clock<Duration>
    let limit: Duration

    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let limit = limit
        return try await DeadlineRace.run(limit: limit, clock: clock, operation, translate: DatabaseErrors.translate) {
            .failure(DatabaseErrors.noAnswer(within: limit))
        }
    }

    /// Waits `duration` on the deadline's clock, between retries.
    func pause(_ duration: Duration) async throws {
        try await DeadlineRace.sleep(on: clock, for: duration)
    }
}
