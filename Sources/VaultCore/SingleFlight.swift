import Synchronization

/// One task per key at a time: a caller for a key whose task is still running joins it instead of
/// starting another (Go's `singleflight`). The session manager runs one refresh per login this way,
/// however many callers ask at once.
///
/// ```swift
/// let flights = SingleFlight<ItemKey, Result<AutoLoginResult, any Error>>()
/// let (task, _) = flights.task(for: key) { await refresh(key) }
/// let answer = try await task.value.get()
/// ```
///
/// A finished task leaves the table by itself; ``forget(_:)`` lets the next caller start afresh
/// while an older task still runs (its end then leaves the newer one in place).
public final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Running {
        let id: UInt64
        let task: Task<Value, Never>
    }

    private struct State {
        var nextID: UInt64 = 0
        var running: [Key: Running] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// The task running for `key`, joined, or `work` started as it. `joined` tells which.
    public func task(for key: Key, starting work: @escaping @Sendable () async -> Value) -> (task: Task<Value, Never>, joined: Bool) {
        state.withLock { state in
            if let running = state.running[key] { return (running.task, true) }
            let id = state.nextID
            state.nextID &+= 1
            let task = Task {
                let value = await work()
                self.end(key, id: id)
                return value
            }
            state.running[key] = Running(id: id, task: task)
            return (task, false)
        }
    }

    /// Lets the next caller for `key` start a task of its own; one still running is not cancelled.
    public func forget(_ key: Key) {
        _ = state.withLock { $0.running.removeValue(forKey: key) }
    }

    private func end(_ key: Key, id: UInt64) {
        state.withLock { state in
            if state.running[key]?.id == id { state.running[key] = nil }
        }
    }
}
