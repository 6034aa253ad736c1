import Synchronization
import Testing
@testable import VaultCore
import VaultTesting

/// The one async lock: one holder per key, waiters in arrival order, other keys never held up, and a
/// cancelled waiter leaves without taking the key or holding up the waiters behind it.
@Suite(.timeLimit(.minutes(20))) struct KeyedLockTests {
    /// What the holders saw, shared between tasks.
    final class Record<Value: Sendable>: Sendable {
        private let value: Mutex<[Value]> = Mutex([])
        func append(_ item: Value) { value.withLock { $0.append(item) } }
        var items: [Value] { value.withLock { $0 } }
    }

    /// Holds `key` until `release` finishes, having said so on `held`.
    static func hold(_ locks: KeyedLock<String>, _ key: String) async -> (task: Task<Void, any Error>, release: AsyncStream<Void>.Continuation) {
        let (held, holding) = AsyncStream<Void>.makeStream()
        let (release, releasing) = AsyncStream<Void>.makeStream()
        let task = Task {
            try await locks.withLock(key) {
                holding.yield()
                for await _ in release {}
            }
        }
        for await _ in held { break }
        return (task, releasing)
    }

    /// Returns once `count` callers wait for `key`: the event a test orders its waiters by.
    static func waitUntilQueued(_ count: Int, _ locks: KeyedLock<String>, _ key: String) async throws {
        try await waitUntil("\(count) waiters queued for \(key)") { locks.waitingCount(for: key) == count }
    }

    @Test func waitersTakeTheKeyInArrivalOrderAndOtherKeysAreFree() async throws {
        let locks = KeyedLock<String>()
        let order = Record<Int>()
        let holder = await Self.hold(locks, "a")
        var waiters: [Task<Void, any Error>] = []
        for index in 0..<5 {
            waiters.append(Task { try await locks.withLock("a") { order.append(index) } })
            // Each waiter queues before the next one starts.
            try await Self.waitUntilQueued(index + 1, locks, "a")
        }
        try await locks.withLock("b") {}  // another key is not held up
        #expect(order.items.isEmpty)
        holder.release.finish()
        try await holder.task.value
        for waiter in waiters { try await waiter.value }
        #expect(order.items == [0, 1, 2, 3, 4])
    }

    @Test func aCancelledWaiterLeavesTheQueueAndTheNextOneGetsTheKey() async throws {
        let locks = KeyedLock<String>()
        let ran = Record<String>()
        let holder = await Self.hold(locks, "a")
        let cancelled = Task { try await locks.withLock("a") { ran.append("cancelled") } }
        try await Self.waitUntilQueued(1, locks, "a")
        let next = Task { try await locks.withLock("a") { ran.append("next") } }
        try await Self.waitUntilQueued(2, locks, "a")
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(locks.waitingCount(for: "a") == 1, "the cancelled waiter is still queued")
        holder.release.finish()
        try await holder.task.value
        try await next.value
        #expect(ran.items == ["next"])
        // The key is free again.
        try await locks.withLock("a") {}
    }

    @Test func aHolderThatThrowsStillPassesTheKeyOn() async throws {
        struct Failure: Error {}
        let locks = KeyedLock<String>()
        await #expect(throws: Failure.self) { try await locks.withLock("a") { throw Failure() } }
        try await locks.withLock("a") {}
    }

    @Test func manyCallersOfOneKeyNeverOverlap() async throws {
        let locks = KeyedLock<Int>()
        let seen = Record<Int>()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await locks.withLock(7) {
                        seen.append(index)
                        await Task.yield()
                        seen.append(index)
                    }
                }
            }
            try await group.waitForAll()
        }
        // Each holder's two marks are next to each other: no other holder ran in between.
        let marks = seen.items
        #expect(marks.count == 400)
        #expect(stride(from: 0, to: marks.count, by: 2).allSatisfy { marks[$0] == marks[$0 + 1] })
    }
}
