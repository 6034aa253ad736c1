import FoundationEssentials
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The last state generation this user has seen of a vault, kept outside the vault's file, so that
/// an older copy of the whole file (whose own state is consistent) is still recognised as old.
///
/// ```swift
/// let record = GenerationFile(path: "\(stateHome)/sortedvault/generation")
/// let vault = try await EncryptedVault(storage: storage, generationRecord: record)
/// ```
/// A record only helps if it is not restored together with the vault: keep it in another directory
/// (sortedvault uses `$XDG_STATE_HOME`, the vault lives in `$XDG_DATA_HOME`).
public protocol GenerationRecord: Sendable {
    /// The vault id and generation last recorded, or nil when nothing was recorded yet.
    func read() throws -> (vaultID: [UInt8], generation: UInt64)?
    /// Replaces the record atomically and durably.
    func write(vaultID: [UInt8], generation: UInt64) throws
}

/// A ``GenerationRecord`` in a small text file (`sortedvault generation v1`, the vault id in hex, the
/// generation, then one `accepted rollback …` line per recovery, the last ``historyLimit`` kept),
/// replaced atomically: written to a temporary file, fsynced, renamed, directory fsynced.
public struct GenerationFile: GenerationRecord {
    public let path: String
    private static let magic = "sortedvault generation v1"
    static let historyPrefix = "accepted rollback "
    static let historyLimit = 16

    public init(path: String) {
        self.path = path
    }

    public func read() throws -> (vaultID: [UInt8], generation: UInt64)? {
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) { throw unreadable("cannot be read") }
            return nil
        }
        let lines = String(decoding: data.prefix(8192), as: UTF8.self).split(separator: "\n").map(String.init)
        guard lines.count >= 3, lines[0] == Self.magic, let generation = UInt64(lines[2]),
              lines[1].utf8.count == 32, let id = Self.bytes(hex: lines[1]),
              lines.dropFirst(3).allSatisfy({ $0.hasPrefix(Self.historyPrefix) }) else {
            throw unreadable("is damaged")
        }
        return (id, generation)
    }

    /// The recoveries recorded (`sortedvault recover --accept-rollback`), oldest first.
    public func acceptedRollbacks() -> [String] {
        guard let data = FileManager.default.contents(atPath: path) else { return [] }
        return String(decoding: data.prefix(8192), as: UTF8.self).split(separator: "\n").dropFirst(3)
            .filter { $0.hasPrefix(Self.historyPrefix) }.map(String.init)
    }

    /// Adds `line` (after ``historyPrefix``) to the record, keeping its vault id and generation.
    public func recordAcceptedRollback(_ line: String) throws {
        guard let (id, generation) = try read() else { throw VaultError.storageFailure("the vault's generation record \(path) is missing: nothing to add the recovery to") }
        try write(vaultID: id, generation: generation, history: Array((acceptedRollbacks() + [Self.historyPrefix + line]).suffix(Self.historyLimit)))
    }

    public func write(vaultID: [UInt8], generation: UInt64) throws {
        try write(vaultID: vaultID, generation: generation, history: acceptedRollbacks())
    }

    private func write(vaultID: [UInt8], generation: UInt64, history: [String]) throws {
        let directory = directoryOfPath(path)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let text = "\(Self.magic)\n\(Hex.text(vaultID))\n\(generation)\n"
            + history.map { $0 + "\n" }.joined()
        let temporary = "\(path).\(UUID().uuidString).tmp"  // unique: two vaults of one process may write at once
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot be written") }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == bytes.count, synced, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw failure("cannot be written")
        }
        let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private func unreadable(_ what: String) -> VaultError {
        VaultError.integrityFailure("the vault's generation record \(path) \(what); it protects against rollback of the vault file. "
            + "If you removed or replaced it yourself, run `sortedvault recover --accept-rollback`")
    }

    private func failure(_ what: String) -> VaultError {
        VaultError.storageFailure("the vault's generation record \(path) \(what): \(String(cString: strerror(errno))); check that directory")
    }

    private static func bytes(hex: String) -> [UInt8]? {
        var out: [UInt8] = []
        var iterator = hex.utf8.makeIterator()
        while let high = iterator.next(), let low = iterator.next() {
            guard let h = nibble(high), let l = nibble(low) else { return nil }
            out.append(h << 4 | l)
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
