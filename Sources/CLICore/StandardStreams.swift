import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Standard output and error for every program: secrets go from secure memory to the descriptor
/// without a `String`, and a failure reads `PROGRAM: MESSAGE` on standard error.
public enum StandardStreams {
    /// A secret's exact bytes on standard output.
    public static func writeToStandardOutput(_ secret: SecureBytes) {
        secret.withUnsafeBytes { writeAll(1, $0) }
    }

    /// Bytes on standard output.
    public static func writeToStandardOutput(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(1, $0) }
    }

    /// `PROGRAM: MESSAGE` and a newline on standard error.
    public static func reportError(_ message: String, program: String = "sortedvault") {
        Array("\(program): \(message)\n".utf8).withUnsafeBytes { writeAll(2, $0) }
    }

    /// `sortedvault: MESSAGE` on standard error, then exit with the failure's status.
    public static func exit(with failure: WireFailure) -> Never {
        reportError(failure.message)
        Glibc.exit(failure.status.rawValue)
    }

    /// All of `raw` on `descriptor`, however many writes it takes; stops where the descriptor fails.
    public static func writeAll(_ descriptor: Int32, _ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let n = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
    }
}

/// A failure that reaches a program's top level unreported (ArgumentParser prints `Error: …`)
/// reads as its message.
extension WireFailure: CustomStringConvertible {
    public var description: String { message }
}
