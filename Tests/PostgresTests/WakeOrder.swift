import Synchronization
import VaultTesting

/// The order in which waiters on several rows were woken: each named stream's first yield is
/// recorded as it happens. A test gives a hint a negative control with it: a commit to another row
/// wakes that row's waiter, and the record then shows the waiter under test still asleep.
///
/// ```swift
/// let woken = WakeOrder(["item": itemHints, "other": otherHints])
/// defer { woken.cancel() }
/// try await storeOther()
/// #expect(try await woken.wait(for: 1) == ["other"])
/// ```
final class WakeOrder: Sendable {
    private let woken = Mutex<[String]>([])
    private let watchers = Mutex<[Task<Void, Never>]>([])

    init(_ streams: [String: AsyncStream<Void>]) {
        let tasks = streams.map { name, stream in
            Task { [self] in
                for await _ in stream {
                    record(name)
                    break
                }
            }
        }
        watchers.withLock { $0 = tasks }
    }

    private func record(_ name: String) { woken.withLock { $0.append(name) } }

    /// The names woken so far, in order.
    var names: [String] { woken.withLock { $0 } }

    /// Waits until `count` waiters have woken (at most `limit`), then gives every name woken by
    /// then, so a waiter woken too early shows up beside the one awaited.
    func wait(for count: Int, limit: Duration = .seconds(60)) async throws -> [String] {
        try await waitUntil(limit: limit, "\(count) change hints (woken so far: \(names))") { names.count >= count }
        return names
    }

    func cancel() { watchers.withLock { $0.forEach { $0.cancel() } } }
}
