import VaultCore
import VaultCrypto

/// Bounds every database call by a deadline on an injected clock: postgres-nio has no query timeout
/// (its issues #274, #565, #574), and a server that stops answering would otherwise hold the caller
/// for as long as the kernel keeps the socket.
///
/// ```swift
/// let deadline = DatabaseDeadline(clock: ContinuousClock(), limit: .seconds(5))
/// let rows = try await deadline.run { try await client.query("SELECT 1") }
/// ```
///
/// The call and a sleep on the clock race; the first to finish answers. The losing call is cancelled
/// but not awaited: a task group would wait for it, and a query on a silent connection ignores
/// cancellation until the connection dies, which is the hang this exists to prevent. The server's
/// `statement_timeout` and `idle_in_transaction_session_timeout` end its side of an abandoned call.
struct DatabaseDeadline: Sendable {
    let clock: any Clock<Duration>
    let limit: Duration

    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        let limit = limit
        let clock = clock
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                race.begin(continuation)
                let work = Task {
                    do { race.finish(.success(try await operation())) }
                    catch { race.finish(.failure(DatabaseErrors.translate(error))) }
                }
                let timer = Task {
                    do { try await Self.sleep(on: clock, for: limit) } catch { return }
                    race.finish(.failure(DatabaseErrors.noAnswer(within: limit)))
                }
                race.track(work, timer)
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    fileprivate static func sleep<C: Clock<Duration>>(on clock: C, for duration: Duration) async throws {
        try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
    }
}

/// The first of the call, the timer and the caller's cancellation to finish resumes the caller once;
/// the other tasks are then cancelled.
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

    func finish(_ outcome: Result<T, any Error>) {
        let (continuation, tasks) = state.withLock { state -> (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            defer { state.continuation = nil }
            return (state.continuation, state.tasks)
        }
        continuation?.resume(with: outcome)
        tasks.forEach { $0.cancel() }
    }
}

extension DatabaseDeadline {
    /// Waits `duration` on the deadline's clock, between retries.
    func pause(_ duration: Duration) async throws {
        try await Self.sleep(on: clock, for: duration)
    }
}
