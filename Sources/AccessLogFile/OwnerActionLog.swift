import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// Records in the access log what the owner did to the vault without the daemon, so that it leaves
/// a trace where `sortedvault log` looks (the file, also when systemd sends the daemon's lines to the
/// journal: this process's standard error is a terminal, not the journal).
///
/// ```swift
/// OwnerActionLog.record(path: paths.accessLog, operation: "recover", note: "accepted a rollback …")
/// ```
public enum OwnerActionLog {
    /// Appends the line; false when the log cannot be written (the caller says so).
    @discardableResult
    public static func record(path: String, operation: String, note: String) -> Bool {
        let directory = directoryOfPath(path)
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard let file = try? RotatingLogFile(path: path, maxBytes: 1 << 20) else { return false }
        let seconds = Int(SystemClock().now.timeIntervalSince1970.rounded(.down))
        return file.append(line(operation: operation, note: note, at: seconds))
    }

    /// The line for what the owner did, by this process, at `seconds` since the epoch:
    /// `… owner uid=1000 gid=1000 pid=42 exe="…" operation="recover" note="…"`.
    public static func line(operation: String, note: String, at seconds: Int) -> String {
        let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        return timestamp(seconds: seconds) + " owner" + peerText(uid: getuid(), gid: getgid(), pid: getpid(), executable: executable)
            + " operation=" + LogText.quoted(operation) + " note=" + LogText.quoted(note) + "\n"
    }

    /// ` uid=… gid=… pid=… exe="…"`, as every line of the access log names its peer.
    public static func peerText(uid: UInt32, gid: UInt32, pid: Int32, executable: String?) -> String {
        " uid=\(uid) gid=\(gid) pid=\(pid) exe=" + LogText.quoted(executable ?? "?")
    }

    /// `seconds` since the epoch as `2026-11-22T18:40:01Z`.
    public static func timestamp(seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }
}
