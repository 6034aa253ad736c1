import Dispatch

/// Where slow key derivation runs: its own serial dispatch queue, off Swift's cooperative thread
/// pool (two threads on a 2-core machine), so that a half-second Argon2id never holds up other
/// callers. Serial on purpose: one derivation at a time bounds memory (each Argon2id pass holds its
/// whole cost in RAM) and CPU, however many unlock attempts arrive at once.
enum KeyDerivationQueue {
    private static let queue = DispatchQueue(label: "sortedvault.key-derivation")

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
