import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Which file a socket path names: its device and inode. The daemon remembers the one it bound,
/// so it can tell later whether the path still leads to it (``SocketWatch``) and never removes a
/// socket another daemon has bound there since.
struct SocketIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the socket at `path`; nil when nothing is there or it is not a socket.
    static func of(_ path: String) -> SocketIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return SocketIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

/// The daemon binds its socket itself, as ssh-agent does (umask before bind, so the file is 0600
/// from its first moment), and hands the listening descriptor to the varlink server: the daemon,
/// not the server, then decides whether the path is still its own to remove at shutdown.
enum ListeningSocket {
    /// A listening, close-on-exec Unix stream socket bound at `path`. The path must be free
    /// (``SocketDirectory`` has removed a stale socket already).
    static func bind(_ path: String, backlog: Int32 = 256) throws -> CInt {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw DaemonError("the socket path \(path) is longer than the \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes a Unix socket allows; choose a shorter --socket or XDG_RUNTIME_DIR")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw DaemonError("cannot create a Unix socket: \(String(cString: strerror(errno)))") }
        // The mode is set on the unbound socket, which Linux applies when bind creates the file: never
        // reachable by others, and the process-wide umask (shared with every thread) is left alone.
        let bound = fchmod(fd, 0o600) == 0 ? withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        } : -1
        let bindError = errno
        guard bound == 0 else {
            close(fd)
            throw DaemonError("cannot bind \(path): \(String(cString: strerror(bindError)))")
        }
        guard chmod(path, 0o600) == 0, listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            unlink(path)
            throw DaemonError("cannot listen on \(path): \(reason)")
        }
        return fd
    }

    /// Removes `path` only if it still is the socket `identity` names.
    static func remove(_ path: String, ifStill identity: SocketIdentity?) {
        guard let identity, SocketIdentity.of(path) == identity else { return }
        unlink(path)
    }
}
