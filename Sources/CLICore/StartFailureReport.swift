import VaultAPI
#if canImport(Glibc)
import Glibc
#endif

/// Why the last daemon that a command started did not start, kept where that command can read it:
/// `start-error` in the socket's directory (private, 0700). A detached daemon's standard error is
/// /dev/null, so without it the command could only say "it did not start".
///
/// ```swift
/// StartFailureReport.clear(socket: socket)          // the command, before it starts the daemon
/// StartFailureReport.write(message, socket: socket) // the daemon, when it cannot start
/// if let why = StartFailureReport.read(socket: socket) { … }  // the command, while it waits
/// ```
///
/// Start-up messages name files and settings, never a secret.
public enum StartFailureReport {
    public static func path(socket: String) -> String { SocketTrust.directory(of: socket) + "/start-error" }

    public static func clear(socket: String) {
        unlink(path(socket: socket))
    }

    /// Writes `message` (one file, replaced atomically), only into a real directory of this user's
    /// that nobody else may write in; elsewhere nothing is written.
    public static func write(_ message: String, socket: String) {
        let directory = SocketTrust.directory(of: socket)
        mkdir(directory, 0o700)
        var info = stat()
        guard lstat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
              info.st_mode & 0o022 == 0 else { return }
        let target = path(socket: socket)
        let temporary = target + ".\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let bytes = Array(message.utf8.prefix(4096))
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        if written != bytes.count || rename(temporary, target) != 0 { unlink(temporary) }
    }

    /// The message, if a daemon left one (at most 4 KiB, read without following a symlink).
    public static func read(socket: String) -> String? {
        let fd = open(path(socket: socket), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }
}
