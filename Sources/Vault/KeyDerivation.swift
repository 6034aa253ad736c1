import NIOPosix
import VaultCore

/// Where slow key derivation runs: on the blocking-work pool the vault was given, never on Swift's
/// cooperative threads (two on a 2-core machine) or an event loop, so that a half-second Argon2id
/// does not hold up other callers.
///
/// ```swift
/// let master = try await KeyDerivation.run(on: threadPool) { try KeySlots.open(header, with: credential) }
/// ```
///
/// One derivation at a time in the whole process, whatever the pool's size: each Argon2id pass holds
/// its whole memory cost in RAM, so however many unlock attempts (or vaults) arrive at once, memory
/// and CPU stay bounded by one. The turns are the process's, not the pool's, because that bound is.
/// A caller cancelled while waiting for its turn leaves without deriving; one that has begun runs to the end.
enum KeyDerivation {
    private static let turns = KeyedLock<Turn>()
    private enum Turn: Hashable { case derive }

    static func run<T: Sendable>(on threadPool: NIOThreadPool, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await turns.withLock(.derive) { try await threadPool.runIfActive(body) }
    }
}
