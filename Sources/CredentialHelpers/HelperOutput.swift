import ArgumentParser
import Foundation
import SortedVaultCLI
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Standard output for the credential helpers: secrets are written straight from secure memory.
public enum HelperOutput {
    public static func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll($0) }
    }

    public static func write(_ secret: SecureBytes) {
        secret.withUnsafeBytes { writeAll($0) }
    }

    private static func writeAll(_ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let n = Glibc.write(1, raw.baseAddress! + offset, raw.count - offset)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
    }
}
