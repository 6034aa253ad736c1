#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A policy directory opened safely, and the files read from it.
///
/// ```swift
/// let directory = try PolicyDirectory(path: "/etc/sortedvault/policy", daemonUID: getuid())
/// for name in try directory.fileNames(withSuffix: ".toml") { let text = try directory.text(of: name) }
/// ```
///
/// Anyone who can write the policy can grant themselves the vault, so this refuses — it never
/// skips — a symlink (the directory itself or any file), a non-regular file, anything group- or
/// world-writable, and anything owned by a uid other than the daemon's or root. Files are opened
/// relative to the already-checked directory descriptor with `O_NOFOLLOW` and checked with
/// `fstat` on the descriptor that is then read, so a file swapped after the check is not read.
/// Parent directories of `path` are trusted as the administrator configured them.
final class PolicyDirectory {
    let path: String
    private let descriptor: Int32
    private let daemonUID: UInt32

    init(path: String, daemonUID: UInt32) throws {
        // A trailing slash would make O_NOFOLLOW follow a symlinked directory.
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.path = trimmed
        self.daemonUID = daemonUID
        let fd = open(trimmed, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if fd < 0 {
            let code = errno
            var info = stat()
            if lstat(trimmed, &info) == 0 && (info.st_mode & S_IFMT) == S_IFLNK {
                throw PolicyError(.unsafeFile, file: trimmed, "the policy directory is a symlink; point the daemon at the real directory")
            }
            if code == ENOTDIR {
                throw PolicyError(.unsafeFile, file: trimmed, "is not a directory; the policy location must be a directory of .toml files")
            }
            throw PolicyError(.io, file: trimmed, "cannot open the policy directory: \(Self.describe(code))")
        }
        self.descriptor = fd
        // Fully initialised: a throw from here runs `deinit`, which closes `fd` (once).
        try check(fd, path: trimmed, what: "directory", expectedType: S_IFDIR)
    }

    deinit { close(descriptor) }

    /// Names of entries ending in `suffix`, in sorted (byte) order.
    func fileNames(withSuffix suffix: String) throws -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            let code = errno
            if copy >= 0 { close(copy) }
            throw PolicyError(.io, file: path, "cannot list the policy directory: \(Self.describe(code))")
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasSuffix(suffix) && name != suffix { names.append(name) }
        }
        return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    func filePath(_ name: String) -> String { path == "/" ? "/" + name : path + "/" + name }

    /// The text of the file `name`, or `nil` when it does not exist.
    func text(of name: String) throws -> String? {
        let file = filePath(name)
        let fd = openat(descriptor, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            if code == ELOOP {
                throw PolicyError(.unsafeFile, file: file, "is a symlink; policy files must be regular files, so copy the target here instead")
            }
            throw PolicyError(.io, file: file, "cannot open: \(Self.describe(code))")
        }
        defer { close(fd) }
        let size = try check(fd, path: file, what: "file", expectedType: S_IFREG)
        let limit = TOMLParser.maxFileBytes
        if size > limit {
            throw PolicyError(.tooLarge, file: file, "file is \(size) bytes, more than the \(limit)-byte limit; split it into several files")
        }
        // Read one byte past the limit, in case the file grew since fstat.
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw PolicyError(.io, file: file, "cannot read: \(Self.describe(errno))")
            }
            if n == 0 { break }
            count += n
        }
        if count > limit {
            throw PolicyError(.tooLarge, file: file, "file is more than the \(limit)-byte limit; split it into several files")
        }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw PolicyError(.syntax, file: file, "file is not valid UTF-8; save it as UTF-8")
        }
        return text
    }

    /// Checks type, owner and mode of an open descriptor; returns its size.
    @discardableResult
    private func check(_ fd: Int32, path: String, what: String, expectedType: mode_t) throws -> Int {
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw PolicyError(.io, file: path, "cannot stat: \(Self.describe(errno))")
        }
        if (info.st_mode & S_IFMT) != expectedType {
            throw PolicyError(.unsafeFile, file: path, "is not a \(what == "file" ? "regular file" : "directory"); remove it or move it out of the policy directory")
        }
        if info.st_uid != daemonUID && info.st_uid != 0 {
            throw PolicyError(.unsafeFile, file: path, "is owned by uid \(info.st_uid), not by the daemon's uid \(daemonUID) or root; fix with: chown \(daemonUID) '\(path)'")
        }
        let mode = info.st_mode & 0o7777
        if mode & 0o022 != 0 {
            let who = mode & 0o002 != 0 ? "world-writable" : "group-writable"
            throw PolicyError(.unsafeFile, file: path, "\(what) is \(who) (mode \(String(mode, radix: 8))); anyone who can write it can grant themselves access. Fix with: chmod go-w '\(path)'")
        }
        return Int(info.st_size)
    }

    private static func describe(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
