import CSecretLoader
import NIOPosix
import VaultCore

/// Where every libsecret call runs: on the blocking-work pool its caller was given, one call at a time.
///
/// libsecret's `*_sync` functions block for a D-Bus round trip — up to D-Bus's 25 s timeout when the
/// keyring daemon hangs. Running them on the pool, never on Swift's cooperative threads (two on a
/// 2-core machine) or on a NIO event loop, keeps the daemon serving other clients meanwhile.
///
/// One call at a time in the whole process, by turns of a ``KeyedLock``: GLib's per-thread main
/// contexts and libsecret's one cached `SecretService` are process-wide, and must be used from one
/// thread at a time. The turns are the process's, not the pool's or a store's, because that state is;
/// a caller cancelled while waiting for its turn leaves without calling, a call begun runs to the end.
///
/// libsecret itself is loaded here, by the first call (`CSecretLoader`): a daemon that never uses the
/// keyring never maps it, nor GIO, GLib and the rest it pulls in.
enum SecretServiceCalls {
    private static let turns = KeyedLock<Turn>()
    private enum Turn: Hashable { case call }

    static func run<T: Sendable>(on threadPool: NIOThreadPool, _ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await turns.withLock(.call) {
            try await threadPool.runIfActive {
                try loadLibrary()
                return try body()
            }
        }
    }

    /// Loads libsecret once per process; throws, with the loader's reason, when it cannot be.
    static func loadLibrary() throws {
        var reason = [CChar](repeating: 0, count: 512)
        guard sortedvault_secret_load(&reason, reason.count) == 0 else {
            throw SecretServiceErrors.noLibrary(String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
    }
}
