import Dispatch

/// Where every libsecret call runs: one serial dispatch queue of its own.
///
/// libsecret's `*_sync` functions block for a D-Bus round trip — up to D-Bus's 25 s timeout when the
/// keyring daemon hangs. Running them here, never on Swift's cooperative pool (two threads on a
/// 2-core machine) or on a NIO event loop, keeps the daemon serving other clients meanwhile. Serial,
/// so GLib's per-thread main contexts and libsecret's cached service are used from one thread at a time.
enum SecretServiceQueue {
    private static let queue = DispatchQueue(label: "sortedvault.secret-service")

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
