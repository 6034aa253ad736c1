import Dispatch

/// Where slow key derivation runs: its own dispatch queue, off Swift's cooperative thread pool
/// (two threads on a 2-core machine), so that a half-second Argon2id never holds up other callers.
enum KeyDerivationQueue {
    private static let queue = DispatchQueue(label: "sortedvault.key-derivation", attributes: .concurrent)

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
