import AccessLogFile
import Synchronization
import Vault
import VaultCrypto
import VaultPolicy

/// How the logs name a service. The access log and the daemon's log lie on disk in plaintext while
/// the vault seals every name, so by default a service is written as a keyed pseudonym,
/// `service=<private:3f9a0c1d2e4b5a69>` (as macOS's unified log writes `<private>`): the same name
/// gives the same pseudonym, so the log still shows who asked for the same thing, and `sortedvault
/// log` shows the real names through the unlocked daemon (``VaultService``'s `LogNames`). The key
/// is derived from the vault's master key; until the vault was first unlocked the name is
/// `<private>`. `access_log_names = "plain"` writes names as they are.
///
/// ```swift
/// let names = LogNames(mode: settings.accessLogNames, vault: vault)
/// line += " service=" + names.field(service)
/// ```
final class LogNames: Sendable {
    let mode: DaemonSettings.LogNames
    private let keySource: (@Sendable () -> SecureBytes?)?
    /// Kept once learned, so names stay pseudonymous (never plain) while the vault is locked again.
    private let key = Locked<SecureBytes?>(nil)

    init(mode: DaemonSettings.LogNames, keySource: (@Sendable () -> SecureBytes?)?) {
        self.mode = mode
        self.keySource = keySource
    }

    convenience init(mode: DaemonSettings.LogNames, vault: EncryptedVault) {
        self.init(mode: mode, keySource: { vault.logNamesKeyNow() })
    }

    /// Plain names, quoted: for logs that hold no names at rest (tests, tools).
    static let plain = LogNames(mode: .plain, keySource: nil)

    /// The service as one log field: quoted and escaped when plain, else `<private:…>`.
    func field(_ service: String) -> String {
        guard mode == .pseudonyms else { return LogText.quoted(service) }
        guard let key = currentKey() else { return "<private>" }
        return "<" + Self.pseudonym(service, key: key) + ">"
    }

    /// `private:` and 16 hex digits of a keyed hash of the name's bytes.
    static func pseudonym(_ service: String, key: SecureBytes) -> String {
        let tag = KeyedHash.tag(key: key, context: "log name", parts: [Array(service.utf8)], count: 16).prefix(8)
        return "private:" + tag.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0f)]], as: UTF8.self)
        }.joined()
    }

    /// The key, learned from the vault at the first call after it was unlocked.
    func currentKey() -> SecureBytes? {
        if let known = key.withLock({ $0 }) { return known }
        guard let learned = keySource?() else { return nil }
        key.withLock { $0 = learned }
        return learned
    }
}
