import CSodium

/// Argon2id key derivation (`crypto_pwhash`, ALG_ARGON2ID13) from a passphrase to a 32-byte key.
///
/// ```swift
/// let cost = Argon2Cost.moderate
/// let kek = try PasswordHash.deriveKey(passphrase: passphrase, salt: salt, cost: cost)
/// ```
///
/// Check any cost read from disk with ``Argon2Cost/isWithinBounds`` before deriving, so a tampered file
/// cannot make the process spend minutes or gigabytes.
public enum PasswordHash {
    public static let saltCount = Int(crypto_pwhash_SALTBYTES)

    public static func deriveKey(passphrase: SecureBytes, salt: [UInt8], cost: Argon2Cost, keyCount: Int = 32) throws -> SecureBytes {
        ensureSodium()
        guard salt.count == saltCount else { throw CryptoError.invalidLength(expected: saltCount, actual: salt.count) }
        return try SecureBytes(count: keyCount) { out in
            var empty: CChar = 0  // a valid pointer for an empty passphrase
            let status = passphrase.withUnsafeBytes { pass in
                salt.withUnsafeBufferPointer { saltBuffer in
                    withUnsafePointer(to: &empty) { emptyPointer in
                        crypto_pwhash(
                            out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(keyCount),
                            pass.baseAddress?.assumingMemoryBound(to: CChar.self) ?? emptyPointer, UInt64(pass.count),
                            saltBuffer.baseAddress!,
                            cost.operations, Int(cost.memoryBytes),
                            crypto_pwhash_ALG_ARGON2ID13
                        )
                    }
                }
            }
            guard status == 0 else { throw CryptoError.keyDerivationFailed }
        }
    }
}

/// Argon2id costs: passes over memory and memory in bytes. Named presets follow libsodium's.
///
/// Measured on the 2-core CI machine (libsodium 1.0.18): `interactive` 0.10 s, `moderate` 0.61 s,
/// `sensitive` 3.4 s.
public struct Argon2Cost: Sendable, Hashable, CustomStringConvertible {
    public let operations: UInt64
    public let memoryBytes: UInt64

    /// libsodium's OPSLIMIT/MEMLIMIT_INTERACTIVE: 2 passes, 64 MiB.
    public static let interactive = Argon2Cost(operations: 2, memoryBytes: 64 << 20)
    /// libsodium's MODERATE: 3 passes, 256 MiB. The default for new vaults.
    public static let moderate = Argon2Cost(operations: 3, memoryBytes: 256 << 20)
    /// libsodium's SENSITIVE: 4 passes, 1 GiB. The highest cost a vault file may ask for.
    public static let sensitive = Argon2Cost(operations: 4, memoryBytes: 1 << 30)

    /// The bounds enforced on costs read from a vault file: libsodium's minimum up to `maximum`.
    public static let minimum = Argon2Cost(
        operations: UInt64(crypto_pwhash_OPSLIMIT_MIN), memoryBytes: UInt64(crypto_pwhash_MEMLIMIT_MIN))
    public static let maximum = Argon2Cost(operations: 10, memoryBytes: 1 << 30)

    /// Test hook: the cheapest cost libsodium accepts. Only for tests, where vaults are thrown away;
    /// the explicit name keeps it out of production paths by accident.
    public static let unsafeMinimumForTesting = minimum

    public init(operations: UInt64, memoryBytes: UInt64) {
        self.operations = operations
        self.memoryBytes = memoryBytes
    }

    /// Whether a stored cost is one this build will run: neither below libsodium's minimum nor above ``maximum``.
    public var isWithinBounds: Bool {
        (Self.minimum.operations...Self.maximum.operations).contains(operations)
            && (Self.minimum.memoryBytes...Self.maximum.memoryBytes).contains(memoryBytes)
    }

    public var description: String { "Argon2id(ops: \(operations), mem: \(memoryBytes >> 10) KiB)" }
}
