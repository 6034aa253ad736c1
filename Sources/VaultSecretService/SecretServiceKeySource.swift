import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOPosix
import VaultCore
import VaultCrypto

/// Keeps a vault's key-encryption key in the desktop keyring, so the daemon unlocks the vault itself
/// whenever the keyring is unlocked — usually by the desktop login. The vault's header records only
/// the key's ID; tokens stay in sortedvault's own encrypted store.
///
/// ```swift
/// let keys = SecretServiceKeySource(threadPool: pool)
/// let id = SecretServiceKeySource.newKeyID()
/// try await keys.storeKey(SecureBytes(randomCount: 32), id: id, label: "sortedvault vault key")
/// let key = try await keys.fetchKey(id: id)   // .locked, .notFound or .unavailable otherwise
/// ```
///
/// The key is 32 random bytes, stored as item `org.sortedvault.VaultKey` with attribute `vault-key-id`.
/// Never fall back to something weaker when it cannot be fetched: the vault has a recovery passphrase.
public struct SecretServiceKeySource: Sendable {
    public static let keyBytes = 32
    private let threadPool: NIOThreadPool

    /// The keyring calls run on `threadPool`, one at a time (``SecretServiceCalls``).
    public init(threadPool: NIOThreadPool) {
        self.threadPool = threadPool
    }

    /// A fresh random key ID: 16 bytes as lowercase hex.
    public static func newKeyID() -> String {
        Hex.text(SecureRandom.bytes(count: 16))
    }

    /// Stores `key` in the default collection. Fails with `.locked` rather than prompting.
    public func storeKey(_ key: SecureBytes, id: String, label: String) async throws {
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let collection = try session.defaultCollection()
            if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
            _ = try session.create(in: collection, schema: Schemas.vaultKey, attributes: [Schemas.vaultKeyID: id], label: label,
                                   secret: key, contentType: "application/octet-stream")
        }
    }

    /// The key stored under `id`.
    public func fetchKey(id: String) async throws -> SecureBytes {
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            let matches = try session.search(Schemas.vaultKey, [Schemas.vaultKeyID: id])
            if !matches.locked.isEmpty { throw SecretServiceErrors.locked(try session.defaultCollection()) }
            guard let path = matches.unlocked.first else {
                let collection = try session.defaultCollection()
                if try session.isLocked(collection) { throw SecretServiceErrors.locked(collection) }
                throw VaultError(.notFound,
                    "the desktop keyring holds no sortedvault vault key with ID \(id): it was deleted, or this is another keyring")
            }
            guard let key = try session.secrets(of: [path])[path] else {
                throw VaultError(.locked, "the desktop keyring did not release the vault key: it is locked; unlock it and try again")
            }
            guard key.count == Self.keyBytes else {
                throw VaultError.integrityFailure("the vault key in the desktop keyring is \(key.count) bytes, not \(Self.keyBytes): it was altered")
            }
            return key
        }
    }

    /// Removes the key stored under `id` (for example when `init` fails after storing it).
    public func deleteKey(id: String) async throws {
        try await SecretServiceCalls.run(on: threadPool) {
            let session = try Session.open()
            for path in try session.search(Schemas.vaultKey, [Schemas.vaultKeyID: id]).unlocked { try session.delete(path) }
        }
    }
}
