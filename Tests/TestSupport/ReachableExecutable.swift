import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A copy of a built executable that another user can run: the build folder may sit inside a
/// private directory (Debian creates home directories 0700; `/root` is 0700), where `nobody`
/// cannot reach it. The copy lives in a fresh directory of mode 0755 under the temp directory and
/// is removed when this value goes away.
///
/// ```swift
/// let copy = try ReachableExecutable(copying: CLIHarness.executable)
/// try cli.run(["status"], executable: copy.path, prefix: ["/usr/sbin/runuser", "-u", "nobody", "--"])
/// ```
public final class ReachableExecutable: @unchecked Sendable {
    public let path: String
    private let directory: String

    public init(copying source: String) throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/sv-shared-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a directory for a shared copy of \(source): \(String(cString: strerror(errno)))")
        }
        directory = String(cString: made)
        path = directory + "/" + (source as NSString).lastPathComponent
        do {
            try Self.copy(source, to: path)
            // The lean `sortedvault` hands every command it does not answer itself to the full CLI
            // beside it: a copy of one needs a copy of the other.
            let fullCLI = (source as NSString).deletingLastPathComponent + "/sortedvault-cli"
            if (source as NSString).lastPathComponent == "sortedvault", FileManager.default.fileExists(atPath: fullCLI) {
                try Self.copy(fullCLI, to: directory + "/sortedvault-cli")
            }
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw HarnessError("cannot copy \(source) to \(path): \(error)")
        }
        // mkdtemp makes 0700 and the umask may have trimmed the copy: open both to everyone.
        guard chmod(directory, 0o755) == 0, chmod(path, 0o755) == 0,
              access(directory + "/sortedvault-cli", F_OK) != 0 || chmod(directory + "/sortedvault-cli", 0o755) == 0 else {
            try? FileManager.default.removeItem(atPath: directory)
            throw HarnessError("cannot make \(path) reachable for other users: \(String(cString: strerror(errno)))")
        }
    }

    /// Writes the copy through a close-on-exec descriptor. FileManager's copy leaves its descriptor
    /// inheritable: a child that another test spawns meanwhile keeps it open for its whole life, and
    /// running the copy then fails with ETXTBSY ("Text file busy").
    public static func copy(_ source: String, to destination: String) throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: source))
        let descriptor = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw HarnessError(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        // The umask may have trimmed the mode (a test may narrow it): set it whole.
        guard fchmod(descriptor, 0o755) == 0 else { throw HarnessError(String(cString: strerror(errno))) }
        try bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw HarnessError(String(cString: strerror(errno)))
                }
                offset += written
            }
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A fresh directory under the temp directory that another user can reach (mode 0755), removed when
/// this value goes away: for files another user's process must open or create.
public final class ReachableDirectory: @unchecked Sendable {
    public let path: String

    public init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/sv-reach-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw HarnessError("cannot create a shared directory: \(String(cString: strerror(errno)))")
        }
        path = String(cString: made)
        chmod(path, 0o755)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }
}
