/// Awaits `operation`, but returns (throwing `CancellationError`) as soon as the calling task is
/// cancelled, leaving the operation to finish on its own and dropping its late result.
///
/// For work that cannot be cancelled and may hang — a libsecret call to a stopped keyring daemon
/// blocks its thread until the keyring answers — so that a graceful shutdown never waits for it.
/// Do not use it for work whose result must not be lost.
func abandoningOnCancel<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let (results, delivery) = AsyncStream.makeStream(of: Result<T, any Error>.self, bufferingPolicy: .bufferingNewest(1))
    let work = Task {
        do {
            delivery.yield(.success(try await operation()))
        } catch {
            delivery.yield(.failure(error))
        }
    }
    // Waiting on the stream, unlike on `work.value`, ends as soon as this task is cancelled; a
    // result yielded after that finds the stream ended and is dropped.
    return try await withTaskCancellationHandler {
        for await result in results { return try result.get() }
        throw CancellationError()
    } onCancel: {
        work.cancel()
    }
}
