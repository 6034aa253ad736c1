import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Reading a secret or a request from a descriptor (a pipe, a file, `--passphrase-fd N`) straight
/// into secure memory, never a `String`: the one reader of the lean front, the full CLI and the
/// credential helpers. Each turns ``Failure`` into its own error type (exit code 64, usage).
public enum DescriptorInput {
    public struct Failure: Error, Sendable {
        public let message: String
    }

    /// All of `fd` up to end-of-file, at most `limit` bytes; more is an error that names the limit.
    public static func readAll(fd: Int32, limit: Int, what: String) throws(Failure) -> SecureBytes {
        var length = 0
        var readError: Int32 = 0
        let buffer = SecureBytes(count: limit + 1) { out in
            while length < out.count {
                let n = read(fd, out.baseAddress! + length, out.count - length)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { readError = errno; return }
                if n == 0 { break }
                length += n
            }
        }
        if readError != 0 {
            throw Failure(message: "cannot read \(what): \(String(cString: strerror(readError)))")
        }
        guard length <= limit else {
            throw Failure(message: "\(what) is over the limit of \(limit) bytes; nothing was stored")
        }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }
}
