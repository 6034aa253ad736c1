import Synchronization

/// How many connection handlers of one server are still in memory: each holds a ``Token`` from
/// ``token()``, which counts itself out when the handler is freed. Tests use it to show that a closed
/// connection leaves nothing behind.
final class LiveHandlerCount: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .acquiring) }

    func token() -> Token { Token(self) }

    final class Token {
        private let owner: LiveHandlerCount

        fileprivate init(_ owner: LiveHandlerCount) {
            self.owner = owner
            owner.count.add(1, ordering: .releasing)
        }

        deinit { owner.count.subtract(1, ordering: .releasing) }
    }
}
