#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The per-call re-check of the peer's executable (``PeerCredentials/executableIsUnchanged()``),
/// prepared once per connection so that a call costs one `readlink` and one `stat` into stack
/// memory, with no string built: the `/proc/PID/exe` path and the expected target bytes are kept.
///
/// It is exactly as strict as ``PeerCredentials/executableIsUnchanged()``: it answers true only when
/// the link's bytes equal the path read at accept and the file's device and inode are unchanged;
/// on any difference it asks ``PeerCredentials/executableIsUnchanged()`` itself.
struct ExecutableRecheck {
    private let peer: PeerCredentials
    private let linkPath: [CChar]
    private let expected: [UInt8]

    init(_ peer: PeerCredentials) {
        self.peer = peer
        linkPath = Array("/proc/\(peer.pid)/exe".utf8CString)
        expected = Array((peer.executable ?? "").utf8)
    }

    func isUnchanged() -> Bool {
        guard peer.executable != nil else { return true }  // nothing was granted on an unknown executable
        guard !peer.executableWasDeleted, let file = peer.executableFile, linkMatches() else { return peer.executableIsUnchanged() }
        var info = stat()
        guard stat(linkPath, &info) == 0, UInt64(info.st_dev) == file.device, UInt64(info.st_ino) == file.inode else {
            return peer.executableIsUnchanged()
        }
        return true
    }

    private func linkMatches() -> Bool {
        let capacity = Int(PATH_MAX) + 1
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: capacity) { buffer in
            let length = readlink(linkPath, buffer.baseAddress!, capacity - 1)
            guard length == expected.count else { return false }
            return expected.withUnsafeBytes { memcmp($0.baseAddress!, buffer.baseAddress!, length) == 0 }
        }
    }
}
