import enum VaultAPI.WireLimits
import VaultCrypto
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Standard input, output and error for the lean front, with the full CLI's messages: secrets go
/// from descriptor to secure memory and back without a `String`.
enum StandardStreams {

    /// All of standard input (``DescriptorInput``), which must not be empty.
    static func readSecret() throws(WireFailure) -> SecureBytes {
        let secret: SecureBytes
        do {
            secret = try DescriptorInput.readAll(fd: 0, limit: WireLimits.secretBytes, what: "the secret")
        } catch {
            throw WireFailure(.usage, error.message)
        }
        guard secret.count > 0 else { throw WireFailure(.usage, SecretText.empty) }
        return secret
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
