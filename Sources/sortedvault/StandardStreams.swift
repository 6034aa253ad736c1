import VaultCrypto
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Standard input, output and error for the lean front, with the full CLI's messages: secrets go
/// from descriptor to secure memory and back without a `String`.
enum StandardStreams {
    /// The largest secret (`Limits.maximumSecretBytes`).
    static let maximumSecretBytes = 512 * 1024

    /// All of standard input, as `SecretInput.readAll(fd: 0, …, what: "the secret")` reads it.
    static func readSecret() throws(WireFailure) -> SecureBytes {
        var length = 0
        var readError: Int32 = 0
        let buffer = SecureBytes(count: maximumSecretBytes + 1) { out in
            while length < out.count {
                let n = read(0, out.baseAddress! + length, out.count - length)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { readError = errno; return }
                if n == 0 { break }
                length += n
            }
        }
        if readError != 0 {
            throw WireFailure(.usage, "cannot read the secret: \(String(cString: strerror(readError)))")
        }
        guard length <= maximumSecretBytes else {
            throw WireFailure(.usage, "the secret is over the limit of \(maximumSecretBytes) bytes; nothing was stored")
        }
        guard length > 0 else { throw WireFailure(.usage, SecretText.empty) }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    /// Writes a secret's exact bytes to standard output straight from secure memory.
    static func writeToStandardOutput(_ secret: SecureBytes) {
        secret.withUnsafeBytes { raw in writeAll(1, raw) }
    }

    /// `sortedvault: MESSAGE` on standard error, then exit with the failure's status.
    static func exit(with failure: WireFailure) -> Never {
        let line = Array("sortedvault: \(failure.message)\n".utf8)
        line.withUnsafeBytes { writeAll(2, $0) }
        Glibc.exit(failure.status.rawValue)
    }

    static func writeAll(_ descriptor: Int32, _ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
    }
}
