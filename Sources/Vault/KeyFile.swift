import FoundationEssentials
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A 32-byte random key kept in a file, for headless service accounts that cannot type a passphrase.
///
/// ```swift
/// try KeyFile.create(at: "/home/svc/.config/sortedvault/key")
/// let key = try KeyFile.load(from: "/home/svc/.config/sortedvault/key")
/// ```
///
/// `load` refuses anything but a regular file (not a symlink) owned by the current user with mode
/// 0600 or 0400, holding exactly 32 bytes: anyone else who can read it can open the vault.
public enum KeyFile {
    public static let keyCount = 32

    /// Writes a new random key file with mode 0600; never overwrites an existing file.
    public static func create(at path: String) throws {
        let key = SecureBytes(randomCount: keyCount)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            throw VaultError(.keySourceRejected, "cannot create key file \(path): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else {  // in case the umask was odd
            throw VaultError(.keySourceRejected, "cannot set mode 0600 on key file \(path)")
        }
        let written = key.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == keyCount, fsync(fd) == 0 else {
            unlink(path)
            throw VaultError(.storageFailure, "cannot write key file \(path)")
        }
    }

    /// Reads the key, after checking the file's type, owner, mode and size.
    public static func load(from path: String) throws -> SecureBytes {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP {
                throw VaultError(.keySourceRejected, "key file \(path) is a symbolic link; point to the file itself")
            }
            throw VaultError(.keySourceRejected, "cannot open key file \(path): \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw VaultError(.keySourceRejected, "cannot inspect key file \(path)")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw VaultError(.keySourceRejected, "key file \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw VaultError(.keySourceRejected, "key file \(path) is owned by uid \(info.st_uid), not by you (uid \(geteuid())); it must be yours alone")
        }
        let mode = info.st_mode & 0o7777
        guard mode == 0o600 || mode == 0o400 else {
            throw VaultError(.keySourceRejected,
                "key file \(path) has mode \(String(mode, radix: 8)); run `chmod 600 \(path)` so that only you can read it")
        }
        guard info.st_size == keyCount else {
            throw VaultError(.keySourceRejected, "key file \(path) holds \(info.st_size) bytes, not \(keyCount); it is not a sortedvault key file")
        }
        let key = try SecureBytes(count: keyCount) { buffer in
            var offset = 0
            while offset < keyCount {
                let n = read(fd, buffer.baseAddress! + offset, keyCount - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw VaultError(.keySourceRejected, "cannot read key file \(path)") }
                offset += n
            }
        }
        return key
    }
}
