import FoundationEssentials
import Synchronization
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// A page only this user can read that sends the browser on to the authorization URL: what the
/// browser is started with instead of the URL itself.
///
/// ```swift
/// let page = try PrivateRedirectPage(to: start.authorizationURL)   // $XDG_RUNTIME_DIR/sortedvault-sign-in-….html, 0600
/// spawn("xdg-open", page.fileURL)                                   // argv: a file name, nothing secret
/// defer { page.remove() }                                           // once the sign-in ended
/// ```
///
/// Why: a program's command line is readable by every user in `/proc/PID/cmdline`. The
/// authorization URL carries the state, the PKCE challenge, the nonce and the receiver's path;
/// with them another local user could authorize the same request as its own account and deliver
/// that code to the receiver first (login fixation), or end the sign-in. The page lives in the
/// user's runtime directory (`$XDG_RUNTIME_DIR` when it is a directory of this user that no one
/// else may enter, else a fresh 0700 directory under the temporary directory), is created 0600
/// with `O_EXCL` under a random name, and is removed when the sign-in ends.
public final class PrivateRedirectPage: Sendable {
    /// The page's path.
    public let path: String
    /// The directory made for it (removed with it), when the runtime directory could not be used.
    private let ownDirectory: String?

    public var fileURL: URL { URL(fileURLWithPath: path) }

    public init(to url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let name = "sortedvault-sign-in-" + Hex.text(SecureRandom.bytes(count: 16)) + ".html"
        if let runtime = environment["XDG_RUNTIME_DIR"], Self.isPrivateDirectory(runtime) {
            (path, ownDirectory) = (runtime + "/" + name, nil)
        } else {
            var template = Array(((environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp") + "/sortedvault-sign-in-XXXXXX").utf8CString)
            guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
                throw VaultError(.unavailable, "no private directory for the sign-in page (\(String(cString: strerror(errno)))): set XDG_RUNTIME_DIR to a directory only you can enter")
            }
            let directory = String(cString: made)
            (path, ownDirectory) = (directory + "/" + name, directory)
        }
        do {
            try Self.writeFile(Self.page(to: url), to: path)
        } catch {
            if let ownDirectory { rmdir(ownDirectory) }
            throw error
        }
    }

    /// Removes the page (and its own directory); safe to call more than once.
    public func remove() {
        unlink(path)
        if let ownDirectory { rmdir(ownDirectory) }
    }

    /// A directory this user owns, that no group or other user may enter, reached by no symbolic link.
    static func isPrivateDirectory(_ path: String) -> Bool {
        guard path.hasPrefix("/") else { return false }
        var status = stat()
        guard lstat(path, &status) == 0 else { return false }
        return status.st_mode & S_IFMT == S_IFDIR && status.st_uid == geteuid() && status.st_mode & 0o077 == 0
    }

    private static func writeFile(_ text: String, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw VaultError(.unavailable, "cannot create the sign-in page \(path) (\(String(cString: strerror(errno)))); open the printed URL yourself")
        }
        defer { close(fd) }
        _ = fchmod(fd, 0o600)  // whatever the umask
        let bytes = Array(text.utf8)
        var written = 0
        while written < bytes.count {
            let wrote = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            guard wrote > 0 else {
                unlink(path)
                throw VaultError(.unavailable, "cannot write the sign-in page \(path) (\(String(cString: strerror(errno)))); open the printed URL yourself")
            }
            written += wrote
        }
    }

    /// The page: a meta refresh and `location.replace` to `url` (and a link, for a browser that
    /// runs neither), sending no referrer.
    static func page(to url: URL) -> String {
        let target = url.absoluteString
        let html = target.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "&": "&amp;"
            case "<": "&lt;"
            case ">": "&gt;"
            case "\"": "&quot;"
            case "'": "&#39;"
            default: String(scalar)
            }
        }.joined()
        let script = target.unicodeScalars.map { scalar -> String in
            scalar.properties.isAlphabetic && scalar.isASCII || ("0"..."9").contains(scalar) ? String(scalar)
                : "\\u" + Hex.text(scalar.value, width: 4)
        }.joined()
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(html)">
            <title>sortedvault sign-in</title>
            <script>location.replace("\(script)");</script>
            </head><body><p><a href="\(html)" rel="noreferrer">Continue to the sign-in page</a></p></body></html>

            """
    }
}
