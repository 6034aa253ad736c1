/// An error from any `TokenStore` or vault operation.
///
/// Compare by ``code``; read ``reason`` for diagnostics. Neither ever holds secret bytes, and the
/// reason names no item (names are sensitive too) unless the caller passed them in just now.
///
/// ```swift
/// do { _ = try await store.retrieve(service: "api", account: "me") }
/// catch let error as VaultError where error.code == .notFound { … }
/// ```
public struct VaultError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, as a small extensible set: new codes do not break `switch`-less clients.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Value: String, Sendable {
            case notFound, locked, invalidArgument, integrityFailure, storageFailure
            case wrongPassphrase, notInitialized, alreadyInitialized, unsupportedFormat
            case kdfCostOutOfBounds, keySourceRejected, permissionDenied, unavailable, duplicate
            case providerRejected, daemonFailed, callbackMismatch
        }
        private let value: Value
        private init(_ value: Value) { self.value = value }

        /// No item exists for that service and account (or it expired).
        public static let notFound = Code(.notFound)
        /// The vault is locked; unlock it first. Never reported as `notFound`.
        public static let locked = Code(.locked)
        /// The request itself is wrong: empty or over-long name, control characters, secret over the cap.
        public static let invalidArgument = Code(.invalidArgument)
        /// Stored bytes failed authentication: damaged, tampered with, moved or rolled back.
        public static let integrityFailure = Code(.integrityFailure)
        /// The backing store failed (disk full, I/O error, corrupt database).
        public static let storageFailure = Code(.storageFailure)
        /// The passphrase or key file did not open the vault.
        public static let wrongPassphrase = Code(.wrongPassphrase)
        /// No vault exists at that location yet.
        public static let notInitialized = Code(.notInitialized)
        /// A vault already exists at that location.
        public static let alreadyInitialized = Code(.alreadyInitialized)
        /// The file uses a format version this build does not know.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The vault file asks for key-derivation costs outside the allowed bounds.
        public static let kdfCostOutOfBounds = Code(.kdfCostOutOfBounds)
        /// A key source was refused, for example a key file with unsafe permissions.
        public static let keySourceRejected = Code(.keySourceRejected)
        /// The caller is not allowed to do this.
        public static let permissionDenied = Code(.permissionDenied)
        /// The backend cannot be reached right now.
        public static let unavailable = Code(.unavailable)
        /// The item already exists and the caller asked not to replace it.
        public static let duplicate = Code(.duplicate)
        /// An OAuth2 provider refused a request for a reason other than a dead refresh token
        /// (`invalid_client`, an unreadable answer…): the saved client settings need fixing.
        public static let providerRejected = Code(.providerRejected)
        /// The daemon a command started could not start (its own reason is in the message).
        public static let daemonFailed = Code(.daemonFailed)
        /// A sign-in callback whose state is not the one that sign-in sent (another tab's, or a
        /// forgery): nothing changed, and the sign-in still waits for its own callback.
        public static let callbackMismatch = Code(.callbackMismatch)

        /// A stable, machine-readable name such as `notFound`.
        public var name: String { value.rawValue }
        public var description: String { value.rawValue }
    }

    public let code: Code
    /// What happened and what to do, in words safe to log.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    public static func == (lhs: VaultError, rhs: VaultError) -> Bool { lhs.code == rhs.code }
}

extension VaultError {
    public static let locked = VaultError(.locked, "the vault is locked: unlock it first (`sortedvault unlock`)")
    public static func notFound(_ key: ItemKey) -> VaultError {
        VaultError(.notFound, "no item for service \(key.service.debugDescription), account \(key.account.debugDescription)")
    }
    public static func invalidArgument(_ reason: String) -> VaultError { VaultError(.invalidArgument, reason) }
    public static func integrityFailure(_ reason: String) -> VaultError { VaultError(.integrityFailure, reason) }
    public static func storageFailure(_ reason: String) -> VaultError { VaultError(.storageFailure, reason) }
}
