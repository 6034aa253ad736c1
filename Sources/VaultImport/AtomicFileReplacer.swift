#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// Replaces a credential file with its rewritten bytes so that a crash or a failure at any point
/// leaves either the old file or the new one, never a mix: a temporary file in the same directory
/// with the original's mode and owner, fsync, rename over the original, fsync of the directory.
///
/// ```swift
/// try AtomicFileReplacer.replace(path: path, expecting: original, with: cleaned, keepBackup: true)
/// ```
///
/// The file is checked to still hold exactly `original` first (a tool may have rewritten it since
/// the scan; then nothing is changed). A symbolic link is followed and its target replaced, so a
/// dotfile manager's link stays. The backup, `FILE.sortedvault-backup`, is created exclusively (an
/// old one is never overwritten) with the original's mode and owner. Extended attributes and ACLs
/// of the original are not carried over.
public enum AtomicFileReplacer {
    public static let backupSuffix = ".sortedvault-backup"

    /// Where a test makes the replacement fail, to see the original left whole.
    enum Step: Sendable { case backupWritten, temporaryWritten }

    public static func replace(path: String, expecting original: SecureBytes, with replacement: [UInt8], keepBackup: Bool) throws {
        try replace(path: path, expecting: original, with: replacement, keepBackup: keepBackup, failingAfter: nil)
    }

    static func replace(path: String, expecting original: SecureBytes, with replacement: [UInt8], keepBackup: Bool,
                        failingAfter failure: Step?) throws {
        let target = try resolved(path)
        guard let current = try ImportFile.read(path: target), current == original else {
            throw ImportError(.changedSinceScan, "\(target) changed since it was read; scan it again")
        }
        var info = stat()
        guard stat(target, &info) == 0 else { throw ImportFile.systemError("stat", target, errno) }
        let mode = info.st_mode & 0o7777
        let directory = target.lastIndex(of: "/").map { String(target[..<$0]) } ?? "."
        let name = target.lastIndex(of: "/").map { String(target[target.index(after: $0)...]) } ?? target

        let backup = keepBackup ? try writeBackup(of: target, original, mode: mode, like: info, failingAfter: failure) : nil
        let prefix: String = directory.isEmpty ? "/" : directory + "/"
        var template: [CChar] = Array((prefix + "." + name + ".sortedvault-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        if descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        guard descriptor >= 0 else {
            if let backup { unlink(backup) }
            throw ImportFile.systemError("create a temporary file in", directory, errno)
        }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        do {
            do {
                defer { close(descriptor) }
                try replacement.withUnsafeBytes { try finish(descriptor, temporary, $0, mode: mode, like: info) }
            }
            if failure == .temporaryWritten { throw ImportError(.system, "failing before the rename, as the test asked") }
            guard rename(temporary, target) == 0 else { throw ImportFile.systemError("rename over", target, errno) }
        } catch {
            unlink(temporary)
            if let backup { unlink(backup) }
            throw error
        }
        try syncDirectory(directory.isEmpty ? "/" : directory)
    }

    /// Writes `original` to `target` + ``backupSuffix``, a new file (never one that exists) with
    /// the target's mode, synced; returns its path.
    private static func writeBackup(of target: String, _ original: SecureBytes, mode: mode_t, like info: stat,
                                    failingAfter failure: Step?) throws -> String {
        let backupPath = target + backupSuffix
        let descriptor = open(backupPath, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw ImportFile.systemError("create the backup", backupPath, errno) }
        do {
            defer { close(descriptor) }
            try original.withUnsafeBytes { try finish(descriptor, backupPath, $0, mode: mode, like: info) }
            if failure == .backupWritten { throw ImportError(.system, "failing after the backup, as the test asked") }
        } catch {
            unlink(backupPath)
            throw error
        }
        return backupPath
    }

    /// Creates `path` with `contents` and mode 0600, whole or not at all: a temporary file beside
    /// it, fsync, then `link` to the name (which fails, changing nothing, when the name exists: an
    /// existing file is never overwritten), the temporary name removed, fsync of the directory.
    public static func create(path: String, contents: [UInt8]) throws {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let prefix: String = directory.isEmpty ? "/" : directory + "/"
        var template: [CChar] = Array((prefix + "." + name + ".sortedvault-XXXXXX").utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw ImportFile.systemError("create a temporary file in", directory.isEmpty ? "/" : directory, errno) }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(temporary) }
        do {
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else { throw ImportFile.systemError("fstat", temporary, errno) }
            try contents.withUnsafeBytes { try finish(descriptor, temporary, $0, mode: 0o600, like: info) }
        }
        guard link(temporary, path) == 0 else {
            if errno == EEXIST { throw ImportError(.system, "\(path) exists already: nothing was written; remove it or choose another name") }
            throw ImportFile.systemError("create", path, errno)
        }
        try syncDirectory(directory.isEmpty ? "/" : directory)
    }

    /// Owner and mode as the original's, all bytes written, fsync.
    static func finish(_ descriptor: Int32, _ path: String, _ bytes: UnsafeRawBufferPointer, mode: mode_t, like info: stat) throws {
        if info.st_uid != geteuid() || info.st_gid != getegid() {
            guard fchown(descriptor, info.st_uid, info.st_gid) == 0 else { throw ImportFile.systemError("fchown", path, errno) }
        }
        guard fchmod(descriptor, mode) == 0 else { throw ImportFile.systemError("fchmod", path, errno) }
        var done = 0
        while done < bytes.count {
            let wrote = write(descriptor, bytes.baseAddress! + done, bytes.count - done)
            if wrote < 0 && errno == EINTR { continue }
            guard wrote > 0 else { throw ImportFile.systemError("write", path, errno) }
            done += wrote
        }
        guard fsync(descriptor) == 0 else { throw ImportFile.systemError("fsync", path, errno) }
    }

    static func syncDirectory(_ directory: String) throws {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ImportFile.systemError("open the directory", directory, errno) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw ImportFile.systemError("fsync the directory", directory, errno) }
    }

    static func resolved(_ path: String) throws -> String {
        guard let pointer = realpath(path, nil) else { throw ImportFile.systemError("realpath", path, errno) }
        defer { free(pointer) }
        return String(cString: pointer)
    }
}
