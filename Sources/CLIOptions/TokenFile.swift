import FoundationEssentials
import Synchronization
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// The private file `sortedvault exec` hands its command: the access token's bytes, mode 0600, in a
/// 0700 directory under the caller's own `$XDG_RUNTIME_DIR` (a tmpfs: never on disk) — never beside
/// a `--socket` elsewhere. Its path goes in the command's environment; the token never does.
///
/// The directories are opened once, each with `O_NOFOLLOW` relative to its parent's descriptor and
/// checked to be the caller's and private; every later write, rename and unlink goes through that
/// descriptor, so a directory swapped for a symlink afterwards redirects nothing.
///
/// Every write is a new file renamed over the old one, so a reader sees the old token or the new
/// one, never a mix or an empty file. ``remove()`` deletes it, and a write after it does nothing (a
/// refresh that races the command's exit leaves no file); files left by an exec that was itself
/// SIGKILLed are removed by the next exec, which checks that their pid is gone.
///
/// ```swift
/// let file = try TokenFile(environment: ProcessInfo.processInfo.environment)
/// defer { file.remove() }
/// try file.write(token)
/// ```
public final class TokenFile: @unchecked Sendable {
    public let path: String
    private let directory: CInt
    private let name: String
    private let lock = Mutex(())
    private var generation = 0
    private var removed = false

    public init(environment: [String: String]) throws {
        guard let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") else {
            throw VaultError(.storageFailure, "XDG_RUNTIME_DIR is not set (or not absolute): exec keeps the token in your private runtime directory; set it (usually /run/user/\(getuid())) and try again")
        }
        let top = open(runtime, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard top >= 0 else {
            throw VaultError(.storageFailure, "cannot open XDG_RUNTIME_DIR \(runtime): \(String(cString: strerror(errno)))")
        }
        defer { close(top) }
        try Self.checkPrivate(top, runtime, exactly0700: false)
        let level = try Self.openPrivateDirectory("sortedvault", in: top, path: runtime + "/sortedvault")
        defer { close(level) }
        directory = try Self.openPrivateDirectory("exec", in: level, path: runtime + "/sortedvault/exec")
        let random = SecureBytes(randomCount: 8).withUnsafeBytes { Hex.text($0) }
        name = "token-\(getpid())-\(random)"
        path = runtime + "/sortedvault/exec/" + name
        removeStale()
    }

    deinit { close(directory) }

    /// Replaces the file's content with `token`, atomically; nothing once the file was removed.
    public func write(_ token: SecureBytes) throws {
        try lock.withLock { _ in
            guard !removed else { return }
            generation += 1
            let temporary = name + ".new\(generation)"
            let fd = openat(directory, temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard fd >= 0 else { throw VaultError(.storageFailure, "cannot create the token file in \(path): \(String(cString: strerror(errno)))") }
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
            guard written, renameat(directory, temporary, directory, name) == 0 else {
                let reason = String(cString: strerror(errno))
                unlinkat(directory, temporary, 0)
                throw VaultError(.storageFailure, "cannot write the token file \(path): \(reason)")
            }
        }
    }

    /// Deletes the file; later writes do nothing.
    public func remove() {
        lock.withLock { _ in
            removed = true
            _ = unlinkat(directory, name, 0)
        }
    }

    /// Deletes `token-PID-…` files whose exec process no longer exists.
    private func removeStale() {
        let listing = dup(directory)
        guard listing >= 0, let stream = fdopendir(listing) else { return }
        defer { closedir(stream) }
        rewinddir(stream)
        var stale: [String] = []
        while let entry = readdir(stream) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            let parts = entryName.split(separator: "-")
            guard entryName.hasPrefix("token-"), parts.count >= 3, let pid = pid_t(parts[1]) else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { stale.append(entryName) }
        }
        for entryName in stale { unlinkat(directory, entryName, 0) }
    }

    /// `name` under `parent`: created 0700 if absent, opened without following a symlink, and
    /// checked to be a directory of the caller's with mode 0700.
    private static func openPrivateDirectory(_ name: String, in parent: CInt, path: String) throws -> CInt {
        if mkdirat(parent, name, 0o700) != 0 && errno != EEXIST {
            throw VaultError(.storageFailure, "cannot create \(path): \(String(cString: strerror(errno)))")
        }
        let fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else {
            throw VaultError(.storageFailure, "\(path) is not a private directory of yours (\(String(cString: strerror(errno)))): remove it and try again")
        }
        var status = stat()
        if fstat(fd, &status) == 0, status.st_uid == getuid(), status.st_mode & 0o777 != 0o700 {
            fchmod(fd, 0o700)  // created under a umask that took bits away
        }
        do { try checkPrivate(fd, path, exactly0700: true) } catch { close(fd); throw error }
        return fd
    }

    /// The directory behind `fd` is the caller's and no one else may write in it (exactly 0700 for ours).
    private static func checkPrivate(_ fd: CInt, _ path: String, exactly0700: Bool) throws {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
              exactly0700 ? status.st_mode & 0o777 == 0o700 : status.st_mode & 0o022 == 0 else {
            throw VaultError(.storageFailure, "\(path) is not a private directory of yours (owned by you, mode 0700): remove it or fix its mode and try again")
        }
    }
}
