import CSecretLoader
import Dispatch

/// Where every libsecret call runs: one serial dispatch queue of its own.
///
/// libsecret's `*_sync` functions block for a D-Bus round trip — up to D-Bus's 25 s timeout when the
/// keyring daemon hangs. Running them here, never on Swift's cooperative pool (two threads on a
/// 2-core machine) or on a NIO event loop, keeps the daemon serving other clients meanwhile. Serial,
/// so GLib's per-thread main contexts and libsecret's cached service are used from one thread at a time.
///
/// libsecret itself is loaded here, by the first call (`CSecretLoader`): a daemon that never uses the
/// keyring never maps it, nor GIO, GLib and the rest it pulls in.
enum SecretServiceQueue {
    private static let queue = DispatchQueue(label: "sortedvault.secret-service")

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result {
                    try loadLibrary()
                    return try body()
                })
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
