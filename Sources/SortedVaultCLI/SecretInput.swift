import Foundation
import enum VaultAPI.WireLimits
import VaultCore
import VaultCrypto
import VaultWireClient

#if canImport(Glibc)
import Glibc
#endif

/// Reads secrets without putting them on argv or in the environment: from a pipe, from a numbered
/// descriptor, or from a no-echo prompt on the terminal. Bytes go straight into secure memory.
public enum SecretInput {
    /// Writes a secret's exact bytes to standard output straight from secure memory (no `String`).
    public static func writeToStandardOutput(_ secret: SecureBytes) {
        secret.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(1, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
        }
    }

    /// All of standard input (the exact bytes), or a no-echo prompt when it is a terminal.
    public static func secret(prompt: String) throws -> SecureBytes {
        if isatty(0) == 1 { return try promptNoEcho(prompt) }
        return try readAll(fd: 0, limit: WireLimits.secretBytes, what: "the secret")
    }

    /// A passphrase from `fd` (up to the first newline); without one, from standard input when it is
    /// piped and holds something (`printf %s "$PASS" | sortedvault unlock`), else a no-echo prompt.
    public static func passphrase(fd: Int32?, prompt: String) throws -> SecureBytes {
        if let fd {
            guard fcntl(fd, F_GETFD) != -1 else {
                throw VaultError.invalidArgument("--passphrase-fd \(fd): descriptor \(fd) is not open; open it for the command, e.g. `\(fd)< FILE`, or pipe the passphrase on standard input")
            }
            let all = try readAll(fd: fd, limit: 4096, what: "the passphrase")
            return firstLine(of: all)
        }
        if isatty(0) != 1 {
            let piped = firstLine(of: try readAll(fd: 0, limit: 4096, what: "the passphrase"))
            if piped.count > 0 { return piped }
        }
        guard isatty(0) == 1 || FileManager.default.isReadableFile(atPath: "/dev/tty") else {
            throw VaultError.invalidArgument("no passphrase: nothing came on standard input and there is no terminal to ask on; pipe it, or pass it on a descriptor with --passphrase-fd N")
        }
        return try promptNoEcho(prompt)
    }

    /// Reads up to `limit` bytes; more is an error that names the limit.
    public static func readAll(fd: Int32, limit: Int, what: String) throws -> SecureBytes {
        do {
            return try DescriptorInput.readAll(fd: fd, limit: limit, what: what)
        } catch {
            throw VaultError.invalidArgument(error.message)
        }
    }

    /// Asks on the controlling terminal with echo off, and restores the terminal whatever happens.
    public static func promptNoEcho(_ prompt: String) throws -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw VaultError.invalidArgument("no terminal to prompt on: pipe the secret on standard input") }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else { throw VaultError.invalidArgument("cannot control the terminal") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(tty, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        let line = try readAll(fd: tty, limit: 4096, what: "the input", untilNewline: true)
        return line
    }

    private static func readAll(fd: Int32, limit: Int, what: String, untilNewline: Bool) throws -> SecureBytes {
        var length = 0
        let buffer = try SecureBytes(count: limit + 1) { out in
            while length < out.count {
                let n = read(fd, out.baseAddress! + length, 1)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                if out[length] == UInt8(ascii: "\n") { break }
                length += 1
            }
        }
        guard length <= limit else { throw VaultError.invalidArgument("\(what) is too long") }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    /// The bytes before the first newline.
    public static func firstLine(of bytes: SecureBytes) -> SecureBytes {
        bytes.withUnsafeBytes { raw in
            let end = raw.firstIndex(of: UInt8(ascii: "\n")) ?? raw.count
            return SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<end]))
        }
    }
}
