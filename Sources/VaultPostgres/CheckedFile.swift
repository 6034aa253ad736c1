import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// The one check every file named in `[postgresql]` passes before the daemon reads it: opened
/// without following a symlink, a regular file, and neither owned nor changeable by anyone the
/// daemon does not trust. It checks the descriptor it then reads from, so the file cannot be
/// swapped between the check and the read.
///
/// ```swift
/// let password = try CheckedFile.read(path, what: "the database password file", rule: .secret, maximumBytes: 1024)
/// ```
enum CheckedFile {
    enum Rule {
        /// A secret (the password): owned by the daemon's user, no permission for group or others.
        case secret
        /// Public but trusted (the CA file): whoever can change it chooses which server the daemon
        /// trusts, so it must belong to the daemon's user or root and be writable by neither group nor others.
        case trusted
    }

    /// The file's bytes, at most `maximumBytes`; the caller wipes them when they are a secret.
    static func read(_ path: String, what: String, rule: Rule, maximumBytes: Int) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw VaultError(.keySourceRejected,
                             "cannot open \(what) \(path.debugDescription): \(String(cString: strerror(errno))); it must be a regular file, not a symlink")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw VaultError(.keySourceRejected, "\(what) \(path.debugDescription) is not a regular file")
        }
        try check(info, path: path, what: what, rule: rule)
        var bytes = [UInt8](repeating: 0, count: maximumBytes + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + count, $0.count - count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else {
                wipe(&bytes)
                throw VaultError(.keySourceRejected, "cannot read \(what) \(path.debugDescription)")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumBytes else {
            wipe(&bytes)
            throw VaultError(.keySourceRejected, "\(what) \(path.debugDescription) is over \(maximumBytes) bytes")
        }
        let content = Array(bytes[..<count])
        wipe(&bytes)
        return content
    }

    private static func check(_ info: stat, path: String, what: String, rule: Rule) throws {
        let mode = String(info.st_mode & 0o7777, radix: 8)
        switch rule {
        case .secret:
            guard info.st_uid == geteuid() else {
                throw VaultError(.keySourceRejected,
                                 "\(what) \(path.debugDescription) belongs to another user; it must belong to the user the daemon runs as")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw VaultError(.keySourceRejected, "\(what) \(path.debugDescription) is readable by others (mode \(mode)); run `chmod 600` on it")
            }
        case .trusted:
            guard info.st_uid == geteuid() || info.st_uid == 0 else {
                throw VaultError(.keySourceRejected,
                                 "\(what) \(path.debugDescription) belongs to uid \(info.st_uid), neither the daemon's user (uid \(geteuid())) nor root; whoever owns it chooses which database server the daemon trusts: give it to the daemon's user or root")
            }
            guard info.st_mode & 0o022 == 0 else {
                throw VaultError(.keySourceRejected,
                                 "\(what) \(path.debugDescription) is writable by group or others (mode \(mode)); whoever can write it chooses which database server the daemon trusts: run `chmod 644` on it")
            }
        }
    }

    static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { explicit_bzero(base, buffer.count) }
        }
    }
}
