/// Why a cryptographic operation failed. Small and closed, like swift-crypto's `CryptoKitError`:
/// it never carries key material, plaintext or ciphertext.
public enum CryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The ciphertext did not authenticate: wrong key, or the bytes were changed.
    case authenticationFailure
    /// An input had a length the primitive does not accept.
    case invalidLength(expected: Int, actual: Int)
    /// Key derivation could not run, usually because the requested memory was not available.
    case keyDerivationFailed
    /// The secure allocator could not provide memory.
    case allocationFailed

    public var description: String {
        switch self {
        case .authenticationFailure:
            return "decryption failed: wrong key or damaged data"
        case let .invalidLength(expected, actual):
            return "invalid input length: expected \(expected) bytes, got \(actual)"
        case .keyDerivationFailed:
            return "key derivation failed: not enough memory for the requested cost"
        case .allocationFailed:
            return "secure memory allocation failed"
        }
    }
}
