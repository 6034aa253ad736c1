import VaultCrypto
import Synchronization

/// Awaits `operation`, but returns (throwing `CancellationError`) as soon as the calling task is
/// cancelled, leaving the operation to finish on its own and dropping its late result.
///
/// For work that cannot be cancelled and may hang — a libsecret call to a stopped keyring daemon
/// blocks its thread until the keyring answers — so that a graceful shutdown never waits for it.
/// Do not use it for work whose result must not be lost.
func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let slot = FirstResult<T>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            slot.set(continuation)
            Task {
                do {
                    slot.resume(with: .success(try await operation()))
                } catch {
                    slot.resume(with: .failure(error))
                }
            }
        }
    } onCancel: {
        slot.resume(with: .failure(CancellationError()))
    }
}

/// Resumes a continuation with the first result only; a result that comes before the continuation
/// is set is kept for it.
final class FirstResult<Value: Sendable>: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Value, any Error>)
        case done(Result<Value, any Error>?)
    }
    private let state = Locked(State.empty)

    func set(_ continuation: CheckedContinuation<Value, any Error>) {
        let early = state.withLock { state -> Result<Value, any Error>? in
            guard case .done(let result) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done(nil)
            return result
        }
        if let early { continuation.resume(with: early) }
    }

    func resume(with result: Result<Value, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, any Error>? in
            switch state {
            case .empty:
                state = .done(result)
                return nil
            case .waiting(let continuation):
                state = .done(nil)
                return continuation
            case .done:
                return nil
            }
        }
        waiter?.resume(with: result)
    }
}
