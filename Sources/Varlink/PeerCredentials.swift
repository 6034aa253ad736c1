#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who is on the other end of a Unix socket, as the kernel reports it at accept time.
///
/// The server reads these with `SO_PEERCRED`, `/proc/PID/exe` and `/proc/PID/status`; nothing
/// the client sends can change them. Use them for access decisions, e.g. refuse any uid but the
/// vault owner's.
///
/// `pid` and `executable` describe the process that connected. Before a call whose answer an
/// executable could change, the caller checks that the process still runs the same executable file
/// (``executableIsUnchanged()``), so a connection handed to another program, or kept across an
/// `exec`, is refused. An executable rule is still no proof of identity against code of the same
/// user: see docs/security-socket.md.
public struct PeerCredentials: Sendable, Hashable {
    public let uid: UInt32
    /// The effective gid.
    public let gid: UInt32
    public let pid: Int32
    /// The target of `/proc/PID/exe`, or nil when it cannot be read (another user's process
    /// without `CAP_SYS_PTRACE`, a non-dumpable process, or the process already exited).
    public let executable: String?
    /// The supplementary groups (`Groups:` of `/proc/PID/status`), or nil when they cannot be read.
    public let groups: [UInt32]?
    /// Device and inode of the executable file at accept time, when readable.
    public let executableFile: FileIdentity?

    /// A file, by the numbers that survive renames: device and inode.
    public struct FileIdentity: Sendable, Hashable {
        public let device: UInt64
        public let inode: UInt64
    }

    public init(uid: UInt32, gid: UInt32, pid: Int32, executable: String?, groups: [UInt32]? = nil, executableFile: FileIdentity? = nil) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.executable = executable
        self.groups = groups
        self.executableFile = executableFile
    }

    /// Whether the executable path says the file was deleted or replaced since the process started
    /// (the kernel appends " (deleted)"): the file that ran can no longer be judged by its path.
    public var executableWasDeleted: Bool {
        executable?.hasSuffix(" (deleted)") ?? false
    }

    /// Reads `/proc/PID/exe` again: true when the process still runs the file it connected with,
    /// and that file has not been deleted. Also true when the executable could not be read at
    /// accept (nothing was granted on it: rules with `executables` never match an unknown one).
    public func executableIsUnchanged() -> Bool {
        guard executable != nil else { return true }
        guard let now = Self.executable(ofProcess: pid), now == executable, !executableWasDeleted,
              let file = Self.executableFile(ofProcess: pid), file == executableFile
        else { return false }
        return true
    }
}

/// The layout of Linux's `struct ucred`, which Glibc does not export to Swift.
struct UCred: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

extension PeerCredentials {
    /// The peer of a connection; its supplementary groups only when `readingGroups`.
    init(_ ucred: UCred, readingGroups: Bool) {
        let executable = Self.executable(ofProcess: ucred.pid)
        self.init(uid: ucred.uid, gid: ucred.gid, pid: ucred.pid, executable: executable,
                  groups: readingGroups ? Self.supplementaryGroups(ofProcess: ucred.pid) : nil,
                  executableFile: executable == nil ? nil : Self.executableFile(ofProcess: ucred.pid))
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

    /// Device and inode of the file `/proc/PID/exe` points to (it follows even a deleted file).
    static func executableFile(ofProcess pid: Int32) -> FileIdentity? {
        guard pid > 0 else { return nil }
        var info = stat()
        guard stat("/proc/\(pid)/exe", &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// The `Groups:` line of `/proc/PID/status`; nil when unreadable.
    static func supplementaryGroups(ofProcess pid: Int32) -> [UInt32]? {
        guard pid > 0 else { return nil }
        let descriptor = open("/proc/\(pid)/status", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 1 << 16 {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress!, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        return groups(inStatus: bytes)
    }

    /// The groups of the `Groups:` line of a `/proc/PID/status` text; nil when there is no such
    /// line or a field is not a group number. Read as bytes: this runs at every accept, and going
    /// through `String` and `split` cost more than the rest of the accept's own work together.
    static func groups(inStatus bytes: [UInt8]) -> [UInt32]? {
        let label = Array("Groups:".utf8)
        var lineStart = 0
        while lineStart < bytes.count {
            let lineEnd = bytes[lineStart...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.count
            if lineEnd - lineStart >= label.count, bytes[lineStart..<(lineStart + label.count)].elementsEqual(label) {
                return groupNumbers(bytes[(lineStart + label.count)..<lineEnd])
            }
            lineStart = lineEnd + 1
        }
        return nil
    }

    /// Decimal numbers separated by spaces or tabs, each a `UInt32`; nil for anything else.
    private static func groupNumbers(_ field: ArraySlice<UInt8>) -> [UInt32]? {
        var groups: [UInt32] = []
        var number: UInt32?
        for byte in field {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let (tens, overflowed) = (number ?? 0).multipliedReportingOverflow(by: 10)
                let (sum, carried) = tens.addingReportingOverflow(UInt32(byte - UInt8(ascii: "0")))
                guard !overflowed, !carried else { return nil }
                number = sum
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if let complete = number { groups.append(complete) }
                number = nil
            default:
                return nil
            }
        }
        if let complete = number { groups.append(complete) }
        return groups
    }
}
