import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
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
        return file.append(AccessLog.ownerActionLine(operation: operation, note: note, at: seconds))
    }
}
