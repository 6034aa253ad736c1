#if canImport(Glibc)
import Glibc
#endif
import VaultCrypto

/// Reads a tool's credential file into secure memory, bounded: the file holds secrets, so its bytes
/// never sit in an ordinary buffer that nobody wipes.
///
/// ```swift
/// if let bytes = try ImportFile.read(path: location.path) {
///     let found = try bytes.withUnsafeBytes { try ImportScan.parse($0, source: location.source, path: location.path) }
/// }
/// ```
public enum ImportFile {
    /// The file's bytes, or nil when there is no file at `path` (or a directory on it is missing).
    /// Symbolic links are followed; anything but a regular file is refused, as is a file over
    /// `limit` (``ImportLimits/maximumFileBytes`` for a credential file; a backup is larger).
    public static func read(path: String, limit: Int = ImportLimits.maximumFileBytes) throws -> SecureBytes? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw systemError("open", path, code)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw systemError("fstat", path, errno) }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw ImportError(.notRegularFile, "\(path) is not a regular file")
        }
        let size = Int(info.st_size)
        try checkSize(size, path: path, limit: limit)
        let bytes = try SecureBytes(count: size) { buffer in
            var done = 0
            while done < size {
                let got = Glibc.read(descriptor, buffer.baseAddress! + done, size - done)
                if got < 0 && errno == EINTR { continue }
                guard got >= 0 else { throw systemError("read", path, errno) }
                guard got > 0 else { throw ImportError(.changedSinceScan, "\(path) shrank while it was read") }
                done += got
            }
        }
        var extra: UInt8 = 0
        guard Glibc.read(descriptor, &extra, 1) == 0 else {
            throw ImportError(.changedSinceScan, "\(path) grew while it was read")
        }
        return bytes
    }

    static func checkSize(_ size: Int, path: String, limit: Int = ImportLimits.maximumFileBytes) throws {
        guard size <= limit else {
            throw ImportError(.tooLarge, "\(path) is \(size) bytes, over the \(limit) such a file can be")
        }
    }

    static func systemError(_ call: String, _ path: String, _ code: Int32) -> ImportError {
        ImportError(.system, "\(call) \(path): \(String(cString: strerror(code))) (errno \(code))")
    }
}
