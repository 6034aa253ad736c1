import FoundationEssentials
import VaultCore
import VaultClient
#if canImport(Glibc)
import Glibc
#endif

/// Makes the socket's directory safe to bind in, and makes sure only one daemon serves it.
///
/// The directory must be a real directory (not a symlink) owned by this uid; it is created with, or
/// set to, mode 0700. A lock file inside it is held for the daemon's lifetime, so a second
/// daemon refuses to start instead of taking over a live socket; a socket file left by a crashed
/// daemon (nobody holds the lock) is removed.
struct SocketDirectory: Sendable {
    let socketPath: String
    private let lockDescriptor: CInt

    /// Prepares the directory, takes the lock, and removes a stale socket. With `keepSocket`
    /// (systemd socket activation) an existing socket file is left alone.
    init(socketPath: String, keepSocket: Bool = false) throws {
        self.socketPath = socketPath
        let directory = directoryOfPath(socketPath)
        try Self.secureDirectory(directory)
        let lockPath = directory + "/daemon.lock"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw DaemonError("cannot open the lock file \(lockPath): \(String(cString: strerror(errno)))")
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw DaemonError("another sortedvault daemon is already serving \(socketPath); stop it first (`sortedvault status` talks to it)",
                              anotherDaemonServes: true)
        }
        lockDescriptor = fd
        if !keepSocket { try Self.removeStaleSocket(socketPath) }
    }

    /// Releases the lock (the process exiting does this too).
    func release() {
        close(lockDescriptor)
    }

    private static func secureDirectory(_ path: String) throws {
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw DaemonError("cannot create the socket directory \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw DaemonError("cannot inspect the socket directory \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) != S_IFLNK else {
            throw DaemonError("refusing to start: the socket directory \(path) is a symbolic link; remove it")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw DaemonError("refusing to start: \(path) is not a directory; remove it")
        }
        guard info.st_uid == geteuid() else {
            throw DaemonError("refusing to start: the socket directory \(path) is owned by uid \(info.st_uid), not by you (uid \(geteuid()))")
        }
        // Exactly 0700, whatever umask created it: an odd umask can leave it without the owner's x bit.
        if info.st_mode & 0o777 != 0o700 {
            guard chmod(path, 0o700) == 0 else {
                throw DaemonError("cannot restrict the socket directory \(path) to mode 0700: \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func removeStaleSocket(_ path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }  // nothing there
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw DaemonError("refusing to start: \(path) exists and is not a socket; remove it")
        }
        // We hold the lock, so no live daemon of ours owns this socket; still, never take over a
        // socket that answers.
        if SocketProbe.answers(at: path) {
            throw DaemonError("refusing to start: a process is already listening on \(path); stop it first")
        }
        guard unlink(path) == 0 else {
            throw DaemonError("cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }
}
