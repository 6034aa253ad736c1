import Synchronization

/// Turns by key: one holder of a key at a time, the others waiting in arrival order. The vault's
/// state changes take turns under one key; the session manager takes one key per login.
///
/// ```swift
/// let locks = KeyedLock<ItemKey>()
/// try await locks.withLock(key) { try await readModifyWrite(key) }
/// ```
///
/// A task cancelled while it waits leaves the queue and throws `CancellationError`, without taking
/// the key or holding up the waiters behind it; once it holds the key, its body runs to the end and
/// the key passes to the next waiter. Not re-entrant: a holder that asks for its own key again waits forever.
public final class KeyedLock<Key: Hashable & Sendable>: Sendable {
    private enum Waiter {
        /// Queued; its continuation is not made yet.
        case arriving
        case waiting(CheckedContinuation<Void, any Error>)
        /// The key was handed over before the continuation was made.
        case granted
        /// Cancelled before the continuation was made; already out of the queue.
        case cancelled
    }

    private struct State {
        var held: Set<Key> = []
        var queues: [Key: [UInt64]] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Runs `body` holding `key`, after every earlier caller for `key` has finished its own.
    public func withLock<T>(_ key: Key, isolation: isolated (any Actor)? = #isolation,
                            _ body: () async throws -> T) async throws -> T {
        try await acquire(key)
        defer { release(key) }
        return try await body()
    }

    private func acquire(_ key: Key) async throws {
        let queued: UInt64? = state.withLock { state in
            if state.held.insert(key).inserted { return nil }
            let id = state.nextID
            state.nextID &+= 1
            state.queues[key, default: []].append(id)
            state.waiters[id] = .arriving
            return id
        }
        guard let id = queued else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    switch state.waiters[id] {
                    case .arriving?:
                        state.waiters[id] = .waiting(continuation)
                        return nil
                    case .granted?:
                        state.waiters[id] = nil
                        return .success(())
                    case .cancelled?, .waiting?, nil:
                        state.waiters[id] = nil
                        return .failure(CancellationError())
                    }
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiting: CheckedContinuation<Void, any Error>? = state.withLock { state in
                switch state.waiters[id] {
                case .arriving?:
                    state.waiters[id] = .cancelled
                case .waiting(let continuation)?:
                    state.waiters[id] = nil
                    state.queues[key]?.removeAll { $0 == id }
                    if state.queues[key]?.isEmpty == true { state.queues[key] = nil }
                    return continuation
                case .granted?, .cancelled?, nil:
                    return nil  // it holds the key already (or has left)
                }
                state.queues[key]?.removeAll { $0 == id }
                if state.queues[key]?.isEmpty == true { state.queues[key] = nil }
                return nil
            }
            waiting?.resume(throwing: CancellationError())
        }
    }

    /// How many callers wait for `key` (the holder not counted): what a test waits on to know a
    /// caller has queued, instead of sleeping and hoping it has.
    func waitingCount(for key: Key) -> Int {
        state.withLock { $0.queues[key]?.count ?? 0 }
    }

    /// Hands `key` to the first waiter, or frees it.
    private func release(_ key: Key) {
        let next: CheckedContinuation<Void, any Error>? = state.withLock { state in
            guard var queue = state.queues[key], !queue.isEmpty else {
                state.held.remove(key)
                return nil
            }
            let id = queue.removeFirst()
            state.queues[key] = queue.isEmpty ? nil : queue
            guard case .waiting(let continuation)? = state.waiters[id] else {
                state.waiters[id] = .granted
                return nil
            }
            state.waiters[id] = nil
            return continuation
        }
        next?.resume()
    }
}
