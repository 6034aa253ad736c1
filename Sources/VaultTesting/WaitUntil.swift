/// A bounded wait for something a test cannot be told about, such as a task reaching a sleep: polls
/// `condition` every millisecond of real time and throws ``WaitTimedOut`` after `limit`.
///
/// ```swift
/// try await waitUntil("the refresh to start") { provider.requests == 1 }
/// ```
///
/// The limit is a hang guard, not a measure: choose one that only a wait that will never end reaches,
/// even on a loaded machine. Prefer waiting on the event itself (a stream, a continuation) where the
/// code under test can signal it.
public func waitUntil(limit: Duration = .seconds(600), _ what: @autoclosure () -> String,
                      _ condition: () throws -> Bool) async throws {
    let giveUp = ContinuousClock.now + limit
    while try !condition() {
        guard ContinuousClock.now < giveUp else { throw WaitTimedOut(what: what(), limit: limit) }
        try await Task.sleep(for: .milliseconds(1))
    }
}

/// ``waitUntil(limit:_:_:)`` gave up: what it waited for did not happen within its limit.
public struct WaitTimedOut: Error, CustomStringConvertible {
    public let what: String
    public let limit: Duration
    public var description: String { "waited \(limit) for \(what), which never happened" }
}

/// `operation`'s result, or ``WaitTimedOut`` after `limit` of real time. An operation still running
/// then is cancelled and abandoned: it finishes on its own and its late result is dropped, so an
/// operation that ignores cancellation fails the test by name instead of hanging it (a task group
/// would wait for it).
public func withHangGuard<T: Sendable>(limit: Duration = .seconds(600), _ what: @autoclosure () -> String = "the operation",
                                       _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    let (outcomes, deliver) = AsyncStream.makeStream(of: Result<T, any Error>?.self, bufferingPolicy: .bufferingOldest(1))
    let work = Task {
        do { deliver.yield(.success(try await operation())) } catch { deliver.yield(.failure(error)) }
    }
    let timer = Task {
        try? await Task.sleep(for: limit)
        deliver.yield(nil)
    }
    defer {
        timer.cancel()
        work.cancel()
    }
    return try await withTaskCancellationHandler {
        for await outcome in outcomes {
            guard let outcome else { throw WaitTimedOut(what: what(), limit: limit) }
            return try outcome.get()
        }
        throw CancellationError()
    } onCancel: {
        deliver.yield(.failure(CancellationError()))
    }
}
