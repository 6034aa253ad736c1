#if canImport(Glibc)
import Glibc
#endif

/// Whether a connected socket is served by this user's own daemon, checked by every client before
/// it sends anything: a secret sent to a socket another user planted (in a shared directory, or
/// through `--socket` or `SORTEDVAULT_SOCKET`) is a secret given away.
///
/// ```swift
/// if let reason = SocketTrust.distrust(descriptor: fd, path: socket) { throw … }  // send nothing
/// ```
///
/// Two checks, as gpg-agent checks its socket directory and ssh-agent's clients do not:
/// - the process serving the socket runs as this client's effective uid (the kernel's `SO_PEERCRED`
///   of this very connection, so no race with the path);
/// - the socket's directory is a real directory owned by that uid and writable by nobody else, so no
///   one else could have put the socket there or swap it later.
public enum SocketTrust {
    /// Nil when the socket can be trusted, else what is wrong, in words for an error message.
    public static func distrust(descriptor: Int32, path: String) -> String? {
        let me = geteuid()
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc exports it only under _GNU_SOURCE).
        var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, UInt32.max, UInt32.max)
        var length = socklen_t(MemoryLayout.size(ofValue: credentials))
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
              Int(length) == MemoryLayout.size(ofValue: credentials) else {
            return "the kernel did not say who serves it (\(String(cString: strerror(errno))))"
        }
        guard credentials.uid == me else {
            return "it is served by a process of uid \(credentials.uid), not by you (uid \(me))"
        }
        let directory = Self.directory(of: path)
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            return "its directory \(directory) cannot be inspected (\(String(cString: strerror(errno))))"
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            return "its directory \(directory) is a symbolic link or not a directory"
        }
        guard info.st_uid == me else {
            return "its directory \(directory) belongs to uid \(info.st_uid), not to you (uid \(me))"
        }
        guard info.st_mode & (S_IWGRP | S_IWOTH) == 0 else {
            return "its directory \(directory) is writable by others (mode \(String(info.st_mode & 0o7777, radix: 8)))"
        }
        return nil
    }

    /// The whole message a client prints when it refuses a socket.
    public static func refusal(path: String, reason: String) -> String {
        "refusing to use the socket \(path): \(reason). Another user may have put it there; nothing was sent. "
            + "Use a socket in a directory only you can write to (the default is $XDG_RUNTIME_DIR/sortedvault/socket)"
    }

    /// The directory part of `path` ("." for a bare name), without Foundation.
    public static func directory(of path: String) -> String {
        var bytes = Array(path.utf8)
        while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
        if slash == 0 { return "/" }
        return String(decoding: bytes[..<slash], as: UTF8.self)
    }
}
