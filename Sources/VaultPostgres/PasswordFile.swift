import Foundation
import VaultCore

/// Reads the database password from a file, refusing one that others could read or swap.
enum PasswordFile {
    static let maximumBytes = 1024

    /// The first line of the file. The file must be a regular file (not a symlink) owned by this user,
    /// with no permission for group or others.
    static func read(_ path: String) throws -> String {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw VaultError(.keySourceRejected,
                             "cannot open the database password file \(path.debugDescription): \(String(cString: strerror(errno))); it must be a regular file, not a symlink")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw VaultError(.keySourceRejected, "the database password file \(path.debugDescription) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw VaultError(.keySourceRejected,
                             "the database password file \(path.debugDescription) belongs to another user; it must belong to the user the daemon runs as")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw VaultError(.keySourceRejected,
                             "the database password file \(path.debugDescription) is readable by others; run `chmod 600` on it")
        }
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        defer { bytes.withUnsafeMutableBytes { memset_s_zero($0) } }
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw VaultError(.keySourceRejected, "cannot read the database password file \(path.debugDescription)") }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumBytes else {
            throw VaultError(.keySourceRejected, "the database password file \(path.debugDescription) is over \(maximumBytes) bytes")
        }
        var line = bytes[..<count]
        if let newline = line.firstIndex(of: UInt8(ascii: "\n")) { line = line[..<newline] }
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard !line.isEmpty, let password = String(validating: line, as: UTF8.self) else {
            throw VaultError(.keySourceRejected, "the database password file \(path.debugDescription) is empty or not UTF-8 text")
        }
        return password
    }

    private static func memset_s_zero(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        explicit_bzero(base, buffer.count)
    }
}
