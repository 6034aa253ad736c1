import FoundationEssentials
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// Keeps recovery and the daemon apart: a `flock` on `vault.db.lock` beside the database, whatever
/// socket a daemon serves. A daemon holds it shared for its lifetime, `sortedvault recover` exclusive
/// while it runs, so recovery never runs beside a live daemon and no daemon starts during one. The
/// file holds the last holder's pid (for the message), nothing else.
///
/// ```swift
/// let owner = try VaultOwnerLock(database: paths.database, exclusive: true)
/// defer { owner.release() }
/// ```
public struct VaultOwnerLock: Sendable {
    private let descriptor: CInt
    public let path: String

    /// Takes the lock (`exclusive` for recovery, shared for a daemon) or throws a `storageFailure`
    /// naming the process that holds it.
    public init(database: String, exclusive: Bool) throws {
        path = database + ".lock"
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw VaultError.storageFailure("cannot open the vault's lock file \(path): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 else {
            var buffer = [UInt8](repeating: 0, count: 32)
            let count = pread(fd, &buffer, buffer.count, 0)
            close(fd)
            let holder = count > 0 ? Int32(String(decoding: buffer[0..<count], as: UTF8.self).trimmedWhitespace) : nil
            let who = holder.map { "process \($0)" } ?? "another sortedvault process"
            throw VaultError.storageFailure(exclusive
                ? "the vault \(database) is in use by \(who), a running daemon: stop it first (`systemctl --user stop sortedvault`, or end that process) and try again"
                : "the vault \(database) is being recovered by \(who) (`sortedvault recover`): wait until it ends")
        }
        let pid = Array("\(getpid())\n".utf8)
        ftruncate(fd, 0)
        _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    /// Releases the lock (the process exiting does this too).
    public func release() {
        close(descriptor)
    }
}
