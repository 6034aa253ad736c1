import VaultCrypto
import FoundationEssentials
import VaultCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// An append-only text file capped at `maxBytes`: when a line would pass the cap, the file becomes
/// `NAME.1` (the older ones move up to `NAME.2`, `NAME.3`, …) and a new file starts. Rotated files are
/// kept by time: those last written more than ``keepSeconds`` ago are removed at the next rotation,
/// and never more than ``maxRotated`` of them (a bound on the disk it takes: `maxBytes` times that).
/// Files are 0600 in a 0700 directory.
///
/// ```swift
/// let file = try RotatingLogFile(path: state + "/access.log", maxBytes: 1 << 20)
/// file.append("one line\n")
/// ```
public final class RotatingLogFile: Sendable {
    public let path: String
    public let maxBytes: Int
    /// Rotated files are kept this long (90 days): a reader has time to look, whatever the volume.
    public static let keepSeconds = 90 * 86_400
    /// At most this many rotated files, whatever their age.
    public static let maxRotated = 64
    private struct State {
        var descriptor: CInt
        var size: Int
    }
    private let state: Locked<State>

    public init(path: String, maxBytes: Int) throws {
        self.path = path
        self.maxBytes = max(maxBytes, 256)
        try Self.makeDirectory(directoryOfPath(path))
        let (descriptor, size) = try Self.open(path)
        state = Locked(State(descriptor: descriptor, size: size))
    }

    deinit {
        _ = state.withLock { close($0.descriptor) }
    }

    /// Appends `line` (which ends in a newline), rotating first when it would pass the cap.
    /// False when the line was not written whole (the caller counts it): the log never stops the
    /// daemon from serving.
    @discardableResult
    public func append(_ line: String) -> Bool {
        append(lines: CollectionOfOne(line)) == 0
    }

    /// Appends `lines` (each ends in a newline) with one `write` per file they go to, rotating
    /// between two lines when the next would pass the cap. Returns how many lines were not written
    /// whole (the caller counts them): the log never stops the daemon from serving.
    public func append(lines: some Collection<String>) -> Int {
        state.withLock { state in
            var failed = 0
            var chunk: [UInt8] = []
            chunk.reserveCapacity(lines.reduce(0) { $0 + $1.utf8.count })
            var chunkLines = 0
            func writeChunk() {
                guard !chunk.isEmpty else { return }
                let written = chunk.withUnsafeBytes { write(state.descriptor, $0.baseAddress, $0.count) }
                if written > 0 { state.size += written }
                // Lines cut short by a partial write (a full disk) were not written whole.
                let whole = written <= 0 ? 0 : chunk[..<written].reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
                failed += chunkLines - whole
                chunk.removeAll(keepingCapacity: true)
                chunkLines = 0
            }
            for line in lines {
                let count = line.utf8.count
                let size = state.size + chunk.count
                if size > 0 && size + count > maxBytes {
                    writeChunk()
                    if state.descriptor >= 0 { close(state.descriptor) }
                    Self.shiftRotated(path)
                    rename(path, path + ".1")
                    if let (descriptor, size) = try? Self.open(path) {
                        state = State(descriptor: descriptor, size: size)
                    } else {
                        state.descriptor = -1
                    }
                }
                guard state.descriptor >= 0 else {
                    failed += 1
                    continue
                }
                chunk.append(contentsOf: line.utf8)
                chunkLines += 1
            }
            writeChunk()
            return failed
        }
    }

    /// `NAME.k` becomes `NAME.k+1`, oldest first; files past ``maxRotated`` or older than
    /// ``keepSeconds`` (by their last write) are removed.
    private static func shiftRotated(_ path: String) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var last = 0
        while last < maxRotated, access(path + ".\(last + 1)", F_OK) == 0 { last += 1 }
        var index = last
        while index >= 1 {
            let name = path + ".\(index)"
            var info = stat()
            let expired = stat(name, &info) == 0 && Int(now.tv_sec) - Int(info.st_mtim.tv_sec) > keepSeconds
            if index >= maxRotated || expired {
                unlink(name)
            } else {
                rename(name, path + ".\(index + 1)")
            }
            index -= 1
        }
    }

    private static func open(_ path: String) throws -> (CInt, Int) {
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw VaultError.storageFailure("cannot open the access log \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else {
            close(descriptor)
            throw VaultError.storageFailure("the access log \(path) is not a regular file of yours; remove it")
        }
        fchmod(descriptor, 0o600)
        return (descriptor, Int(info.st_size))
    }

    private static func makeDirectory(_ path: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw VaultError.storageFailure("cannot create the log directory \(path): \(error)")
        }
    }
}
