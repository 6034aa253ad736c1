import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An append-only text file capped at `maxBytes`: when a line would pass the cap, the file becomes
/// `NAME.1` (replacing the previous one) and a new file starts, so the log never takes more than
/// twice the cap on disk. Files are 0600 in a 0700 directory.
///
/// ```swift
/// let file = try RotatingLogFile(path: state + "/access.log", maxBytes: 1 << 20)
/// file.append("one line\n")
/// ```
final class RotatingLogFile: Sendable {
    let path: String
    let maxBytes: Int
    private struct State {
        var descriptor: CInt
        var size: Int
    }
    private let state: Mutex<State>

    init(path: String, maxBytes: Int) throws {
        self.path = path
        self.maxBytes = max(maxBytes, 256)
        try Self.makeDirectory((path as NSString).deletingLastPathComponent)
        let (descriptor, size) = try Self.open(path)
        state = Mutex(State(descriptor: descriptor, size: size))
    }

    deinit {
        _ = state.withLock { close($0.descriptor) }
    }

    /// Appends `line` (which ends in a newline), rotating first when it would pass the cap.
    /// A failed write is dropped: the log never stops the daemon from serving.
    func append(_ line: String) {
        let bytes = Array(line.utf8)
        state.withLock { state in
            if state.size > 0 && state.size + bytes.count > maxBytes {
                close(state.descriptor)
                rename(path, path + ".1")
                guard let (descriptor, size) = try? Self.open(path) else {
                    state.descriptor = -1
                    return
                }
                state = State(descriptor: descriptor, size: size)
            }
            guard state.descriptor >= 0 else { return }
            let written = bytes.withUnsafeBytes { write(state.descriptor, $0.baseAddress, $0.count) }
            if written > 0 { state.size += written }
        }
    }

    private static func open(_ path: String) throws -> (CInt, Int) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw DaemonError("cannot open the access log \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            close(descriptor)
            throw DaemonError("the access log \(path) is not a regular file of yours; remove it")
        }
        fchmod(descriptor, 0o600)
        return (descriptor, Int(info.st_size))
    }

    private static func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DaemonError("cannot create the log directory \(path): \(error.localizedDescription)")
        }
    }
}
