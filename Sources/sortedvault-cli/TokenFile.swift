import Foundation
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The private file `sortedvault exec` hands its command: the access token's bytes, mode 0600, in a
/// 0700 directory under `$XDG_RUNTIME_DIR` (a tmpfs: never on disk). Its path goes in the command's
/// environment; the token never does.
///
/// Every write is a new file renamed over the old one, so a reader sees the old token or the new
/// one, never a mix or an empty file. `remove()` deletes it; files left by an exec that was itself
/// SIGKILLed are removed by the next exec (`removeStale`), which checks that their pid is gone.
final class TokenFile: @unchecked Sendable {
    let directory: String
    let path: String
    private let lock = NSLock()
    private var generation = 0

    init(runtimeDirectory: String) throws {
        directory = runtimeDirectory + "/sortedvault/exec"
        for level in [runtimeDirectory + "/sortedvault", directory] {
            if mkdir(level, 0o700) == 0 {
                chmod(level, 0o700)  // whatever the umask took away
            } else if errno != EEXIST {
                throw VaultError(.storageFailure, "cannot create \(level): \(String(cString: strerror(errno)))")
            }
        }
        var status = stat()
        guard lstat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
              status.st_mode & 0o777 == 0o700 else {
            throw VaultError(.storageFailure, "\(directory) is not a private directory of yours (mode 0700): remove it and try again")
        }
        let random = SecureBytes(randomCount: 8).withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() }
        path = directory + "/token-\(getpid())-\(random)"
        Self.removeStale(in: directory)
    }

    /// Replaces the file's content with `token`, atomically.
    func write(_ token: SecureBytes) throws {
        try lock.withLock {
            generation += 1
            let temporary = path + ".new\(generation)"
            let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw VaultError(.storageFailure, "cannot create \(temporary): \(String(cString: strerror(errno)))") }
            fchmod(fd, 0o600)  // exactly 0600, whatever the umask
            let written = token.withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return false }
                    offset += n
                }
                return true
            }
            close(fd)
            guard written, rename(temporary, path) == 0 else {
                unlink(temporary)
                throw VaultError(.storageFailure, "cannot write the token file \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    func remove() {
        lock.withLock { _ = unlink(path) }
    }

    /// Deletes `token-PID-…` files whose exec process no longer exists.
    static func removeStale(in directory: String) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasPrefix("token-") {
            let parts = name.split(separator: "-")
            guard parts.count >= 3, let pid = pid_t(parts[1]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(directory + "/" + name) }
        }
    }
}
