import VaultCrypto

extension VaultInterface {
    /// `Status() -> (locked, keySources, items, logins?, queuedRevocations?, version, autoLockMinutes)`.
    public enum Status: VarlinkMethod {
        public static let name = VaultInterface.name + ".Status"
        public typealias Request = NoParameters

        public struct Reply: WireCodable, Equatable {
            public var locked: Bool
            public var keySources: [String]
            public var items: Int64
            public var logins: Int64?
            public var queuedRevocations: Int64?
            public var version: String
            public var autoLockMinutes: Int64
            public var pid: Int64?
            public var uptimeSeconds: Int64?
            public var policyFiles: [String]?
            public var policyReloads: Int64?
            public var policyError: String?

            public init(locked: Bool, keySources: [String], items: Int64, logins: Int64? = nil, queuedRevocations: Int64? = nil,
                        version: String, autoLockMinutes: Int64, pid: Int64? = nil, uptimeSeconds: Int64? = nil,
                        policyFiles: [String]? = nil, policyReloads: Int64? = nil, policyError: String? = nil) {
                self.locked = locked
                self.keySources = keySources
                self.items = items
                self.logins = logins
                self.queuedRevocations = queuedRevocations
                self.version = version
                self.autoLockMinutes = autoLockMinutes
                self.pid = pid
                self.uptimeSeconds = uptimeSeconds
                self.policyFiles = policyFiles
                self.policyReloads = policyReloads
                self.policyError = policyError
            }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                locked = try parameters.bool("locked")
                keySources = try parameters.strings("keySources")
                items = try parameters.int("items")
                logins = try parameters.optionalInt("logins")
                queuedRevocations = try parameters.optionalInt("queuedRevocations")
                version = try parameters.string("version")
                autoLockMinutes = try parameters.int("autoLockMinutes")
                pid = try parameters.optionalInt("pid")
                uptimeSeconds = try parameters.optionalInt("uptimeSeconds")
                policyFiles = try parameters.optionalStrings("policyFiles")
                policyReloads = try parameters.optionalInt("policyReloads")
                policyError = try parameters.optionalString("policyError")
            }

            public func encodeMembers(to writer: inout WireWriter) {
                writer.field("locked", locked)
                writer.field("keySources", keySources)
                writer.field("items", items)
                writer.field("logins", logins)
                writer.field("queuedRevocations", queuedRevocations)
                writer.field("version", version)
                writer.field("autoLockMinutes", autoLockMinutes)
                writer.field("pid", pid)
                writer.field("uptimeSeconds", uptimeSeconds)
                if let policyFiles { writer.field("policyFiles", policyFiles) }
                writer.field("policyReloads", policyReloads)
                writer.field("policyError", policyError)
            }
        }
    }

    /// `Unlock(passphrase?) -> ()`. The passphrase is base64 of its exact bytes, so any byte
    /// sequence works (a passphrase read from a file need not be UTF-8).
    public enum Unlock: VarlinkMethod {
        public static let name = VaultInterface.name + ".Unlock"
        public static var requestSecrets: SecretLimits { SecretLimits(["passphrase": WireLimits.passphraseBytes]) }
        public typealias Reply = NoParameters

        public struct Request: WireCodable, Equatable {
            /// Nil: ask the vault's non-interactive key sources (key file, keyring) again.
            public var passphrase: SecureBytes?

            public init(passphrase: SecureBytes?) { self.passphrase = passphrase }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                passphrase = try parameters.optionalSecret("passphrase")
            }

            public func encodeMembers(to writer: inout WireWriter) { writer.secretField("passphrase", passphrase) }
        }
    }

    /// `LogNames() -> (names: [string]string)`: pseudonym (`private:…`) → service name.
    public enum LogNames: VarlinkMethod {
        public static let name = VaultInterface.name + ".LogNames"
        public typealias Request = NoParameters

        public struct Reply: WireCodable, Equatable {
            public var names: [String: String]

            public init(names: [String: String]) { self.names = names }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                names = try parameters.optionalStringMap("names") ?? [:]
            }

            public func encodeMembers(to writer: inout WireWriter) { writer.field("names", names) }
        }
    }

    /// `Lock() -> ()`.
    public enum Lock: VarlinkMethod {
        public static let name = VaultInterface.name + ".Lock"
        public typealias Request = NoParameters
        public typealias Reply = NoParameters
    }

    /// `ChangePassphrase(old, new) -> ()`, both base64 of the passphrases' bytes.
    public enum ChangePassphrase: VarlinkMethod {
        public static let name = VaultInterface.name + ".ChangePassphrase"
        public static var requestSecrets: SecretLimits {
            SecretLimits(["old": WireLimits.passphraseBytes, "new": WireLimits.passphraseBytes])
        }
        public typealias Reply = NoParameters

        public struct Request: WireCodable, Equatable {
            public var old: SecureBytes
            public var new: SecureBytes

            public init(old: SecureBytes, new: SecureBytes) {
                self.old = old
                self.new = new
            }

            public init(from parameters: WireParameters) throws(WireParameterError) {
                old = try parameters.secret("old")
                new = try parameters.secret("new")
            }

            public func encodeMembers(to writer: inout WireWriter) {
                writer.secretField("old", old)
                writer.secretField("new", new)
            }
        }
    }

    /// The interface's error names.
    public enum Errors {
        public static let notFound = VaultInterface.name + ".NotFound"
        public static let locked = VaultInterface.name + ".Locked"
        public static let permissionDenied = VaultInterface.name + ".PermissionDenied"
        public static let invalidParameter = VaultInterface.name + ".InvalidParameter"
        public static let wrongPassphrase = VaultInterface.name + ".WrongPassphrase"
        public static let tooManyAttempts = VaultInterface.name + ".TooManyAttempts"
        public static let integrityFailure = VaultInterface.name + ".IntegrityFailure"
        public static let storageFailure = VaultInterface.name + ".StorageFailure"
        public static let unsupported = VaultInterface.name + ".Unsupported"
    }
}
