import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// Reads the database password from a file, refusing one that others could read or swap
/// (``CheckedFile``, rule `secret`).
enum PasswordFile {
    static let maximumBytes = 1024

    /// The first line of the file. The file must be a regular file (not a symlink) owned by this user,
    /// with no permission for group or others.
    static func read(_ path: String) throws -> String {
        var bytes = try CheckedFile.read(path, what: "the database password file", rule: .secret, maximumBytes: maximumBytes)
        defer { CheckedFile.wipe(&bytes) }
        var line = bytes[...]
        if let newline = line.firstIndex(of: UInt8(ascii: "\n")) { line = line[..<newline] }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard !line.isEmpty, let password = String(validating: line, as: UTF8.self) else {
            throw VaultError(.keySourceRejected, "the database password file \(path.debugDescription) is empty or not UTF-8 text")
        }
        return password
    }
}
