import enum VaultAPI.WireLimits
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Reads secrets without putting them on argv or in the environment — from a pipe, a numbered
/// descriptor (`--passphrase-fd N`) or a no-echo prompt on the terminal — straight into secure
/// memory, never a `String`: the one reader of every program. A failure is a usage error (64).
///
/// ```swift
/// let secret = try SecretInput.secretToStore(prompt: "Secret for github/ada: ")
/// let passphrase = try SecretInput.passphrase(fd: passphraseFd, prompt: "Vault passphrase: ")
/// ```
public enum SecretInput {
    /// `store` with nothing on standard input (a pipe that gave nothing, `< /dev/null`).
    public static let empty = "the secret is empty (nothing came on standard input); nothing was stored. Pipe it: `printf %s \"$TOKEN\" | sortedvault store SERVICE ACCOUNT`"

    /// All of standard input (the exact bytes, up to the wire's limit for a secret), or a no-echo
    /// prompt when it is a terminal.
    public static func secret(prompt: String) throws(WireFailure) -> SecureBytes {
        if isatty(0) == 1 { return try promptNoEcho(prompt) }
        return try readAll(fd: 0, limit: WireLimits.secretBytes, what: "the secret")
    }

    /// ``secret(prompt:)``, which must not be empty: what `store` keeps.
    public static func secretToStore(prompt: String) throws(WireFailure) -> SecureBytes {
        let secret = try secret(prompt: prompt)
        guard secret.count > 0 else { throw WireFailure(.usage, empty) }
        return secret
    }

    /// A passphrase from `fd` (up to the first newline); without one, from standard input when it is
    /// piped and holds something (`printf %s "$PASS" | sortedvault unlock`), else a no-echo prompt.
    public static func passphrase(fd: Int32?, prompt: String) throws(WireFailure) -> SecureBytes {
        if let fd {
            guard fcntl(fd, F_GETFD) != -1 else {
                throw WireFailure(.usage, "--passphrase-fd \(fd): descriptor \(fd) is not open; open it for the command, e.g. `\(fd)< FILE`, or pipe the passphrase on standard input")
            }
            return firstLine(of: try readAll(fd: fd, limit: 4096, what: "the passphrase"))
        }
        if isatty(0) != 1 {
            let piped = firstLine(of: try readAll(fd: 0, limit: 4096, what: "the passphrase"))
            if piped.count > 0 { return piped }
        }
        guard isatty(0) == 1 || access("/dev/tty", R_OK) == 0 else {
            throw WireFailure(.usage, "no passphrase: nothing came on standard input and there is no terminal to ask on; pipe it, or pass it on a descriptor with --passphrase-fd N")
        }
        return try promptNoEcho(prompt)
    }

    /// All of `fd` up to end-of-file, at most `limit` bytes; more is an error that names the limit.
    public static func readAll(fd: Int32, limit: Int, what: String) throws(WireFailure) -> SecureBytes {
        try read(fd: fd, limit: limit, what: what, untilNewline: false)
    }

    /// Asks on the controlling terminal with echo off, and restores the terminal whatever happens.
    public static func promptNoEcho(_ prompt: String) throws(WireFailure) -> SecureBytes {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw WireFailure(.usage, "no terminal to prompt on: pipe the secret on standard input") }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else { throw WireFailure(.usage, "cannot control the terminal") }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        _ = tcsetattr(tty, TCSAFLUSH, &quiet)
        defer {
            _ = tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        return try read(fd: tty, limit: 4096, what: "the input", untilNewline: true)
    }

    /// The bytes before the first newline.
    public static func firstLine(of bytes: SecureBytes) -> SecureBytes {
        bytes.withUnsafeBytes { raw in
            let end = raw.firstIndex(of: UInt8(ascii: "\n")) ?? raw.count
            return SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[0..<end]))
        }
    }

    /// Up to `limit` bytes of `fd`, to end-of-file or (a terminal's line, read a byte at a time so
    /// that nothing after it is taken) to the first newline, which is not kept.
    private static func read(fd: Int32, limit: Int, what: String, untilNewline: Bool) throws(WireFailure) -> SecureBytes {
        var length = 0
        var readError: Int32 = 0
        let buffer = SecureBytes(count: limit + 1) { out in
            while length < out.count {
                let n = Glibc.read(fd, out.baseAddress! + length, untilNewline ? 1 : out.count - length)
                if n < 0 && errno == EINTR { continue }
                if n < 0 { readError = errno; return }
                if n == 0 { break }
                if untilNewline && out[length] == UInt8(ascii: "\n") { break }
                length += n
            }
        }
        if readError != 0 {
            throw WireFailure(.usage, "cannot read \(what): \(String(cString: strerror(readError)))")
        }
        guard length <= limit else {
            throw WireFailure(.usage, "\(what) is over the limit of \(limit) bytes; nothing was stored")
        }
        return buffer.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }
}
