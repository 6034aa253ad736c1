import NIOPosix

/// The one pool a sortedvault process runs its blocking work on: Argon2id (`EncryptedVault`),
/// libsecret calls (`VaultSecretService`), generation-record writes (`BackgroundGenerationRecord`)
/// and sealing a backup (scrypt, `VaultService.export`),
/// never on Swift's cooperative threads or a NIO event loop.
///
/// ```swift
/// try await BlockingWork.withThreadPool { threadPool in
///     let vault = try await EncryptedVault(storage: storage, threadPool: threadPool)
/// }
/// ```
///
/// Each of the four kinds takes turns with itself (one derivation, one libsecret call, one record
/// write at a time), so one thread per kind means none of them ever waits for another — not even
/// behind a keyring that hangs. Pass the pool on; do not make another beside it.
public enum BlockingWork {
    public static let threads = 4

    /// Runs `body` with a started pool, and shuts the pool down when `body` returns or throws.
    ///
    /// The shutdown is not awaited: a thread still blocked in a libsecret call (up to D-Bus's 25 s
    /// timeout when the keyring hangs) must not hold up the exit, and its answer is not needed any
    /// more. Queued work is dropped, so `body` writes what must reach the disk before it returns
    /// (`BackgroundGenerationRecord.flush()`).
    public static func withThreadPool<T>(isolation: isolated (any Actor)? = #isolation,
                                         _ body: (NIOThreadPool) async throws -> T) async throws -> T {
        let threadPool = NIOThreadPool(numberOfThreads: threads)
        threadPool.start()
        defer { threadPool.shutdownGracefully { _ in } }
        return try await body(threadPool)
    }
}
