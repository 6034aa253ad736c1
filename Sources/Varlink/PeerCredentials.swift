#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who is on the other end of a Unix socket, as the kernel reports it at accept time.
///
/// The server reads these with `SO_PEERCRED` and `/proc/PID/exe`; nothing the client sends can
/// change them. Use them for access decisions, e.g. refuse any uid but the vault owner's.
///
/// `pid` and `executable` describe the process that connected; a process can exit and its pid be
/// reused, so treat `executable` as a hint for policy rules, not as proof of identity.
public struct PeerCredentials: Sendable, Hashable {
    public let uid: UInt32
    public let gid: UInt32
    public let pid: Int32
    /// The target of `/proc/PID/exe`, or nil when it cannot be read (another user's process
    /// without `CAP_SYS_PTRACE`, or the process already exited).
    public let executable: String?

    public init(uid: UInt32, gid: UInt32, pid: Int32, executable: String?) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.executable = executable
    }
}

/// The layout of Linux's `struct ucred`, which Glibc does not export to Swift.
struct UCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension PeerCredentials {
    init(_ ucred: UCred) {
        self.init(uid: ucred.uid, gid: ucred.gid, pid: ucred.pid, executable: Self.executable(ofProcess: ucred.pid))
    }

    /// Reads `/proc/PID/exe`; nil when unreadable.
    static func executable(ofProcess pid: Int32) -> String? {
        guard pid > 0 else { return nil }
        let capacity = Int(PATH_MAX) + 1
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer -> String? in
            let length = readlink("/proc/\(pid)/exe", buffer.baseAddress!, capacity - 1)
            guard length > 0 else { return nil }
            return String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length), as: UTF8.self)
        }
    }
}
