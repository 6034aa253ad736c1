import VaultCore

/// One holder per key at a time, waiters served in arrival order. Lives inside ``SessionManager``
/// (actor-isolated state): every change to one login's stored record — save, the read and the
/// write of a refresh, logout — runs under its key. The key is never held across the network: a
/// refresh re-reads the login under the key before applying the provider's answer, so it never
/// overwrites a newer sign-in or brings back a logged-out login, and a logout never waits for a
/// slow provider.
struct KeyedWaitQueue {
    private var held: Set<ItemKey> = []
    private var waiters: [ItemKey: [CheckedContinuation<Void, Never>]] = [:]

    /// Takes the key if it is free.
    mutating func tryAcquire(_ key: ItemKey) -> Bool {
        held.insert(key).inserted
    }

    mutating func enqueue(_ key: ItemKey, _ continuation: CheckedContinuation<Void, Never>) {
        waiters[key, default: []].append(continuation)
    }

    /// Frees the key, or hands it straight to the next waiter (returned, to be resumed).
    mutating func release(_ key: ItemKey) -> CheckedContinuation<Void, Never>? {
        guard var queue = waiters[key], !queue.isEmpty else {
            held.remove(key)
            return nil
        }
        let next = queue.removeFirst()
        waiters[key] = queue.isEmpty ? nil : queue
        return next
    }
}
