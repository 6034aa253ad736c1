import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import CLICore
import VaultAPI
import VaultClient
import VaultCore
import VaultCrypto
import VaultImport

/// `sortedvault import pass`: every entry of the user's `pass` store, read through the user's own
/// `pass show` (and so their gpg and agent), the secret over a pipe into secure memory, stored by
/// the import's one rule under ``ImportNaming/destination(forPassEntry:)``. The store itself is
/// left as it is: it is encrypted, not plaintext left behind.
struct PassImport {
    let environment: [String: String]
    let replace: Bool

    /// `PASSWORD_STORE_DIR`, else `~/.password-store`, as pass looks.
    var directory: String {
        if let set = environment["PASSWORD_STORE_DIR"], !set.isEmpty { return set }
        return (environment["HOME"] ?? "") + "/.password-store"
    }

    /// The entries' names (paths without `.gpg`), sorted; pass's own `.git` and `.extensions` skipped.
    func entries() throws -> [String] {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw VaultError(.notFound, "no pass store at \(directory) (set PASSWORD_STORE_DIR if it is elsewhere): nothing was imported")
        }
        let paths: [String]
        do {
            paths = try FileManager.default.subpathsOfDirectory(atPath: directory)
        } catch {
            throw VaultError.storageFailure("cannot read the pass store at \(directory)")
        }
        var names: [String] = []
        for relative in paths {
            if relative.hasPrefix(".git") || relative.hasPrefix(".extensions") { continue }
            guard relative.hasSuffix(".gpg") else { continue }
            names.append(String(relative.dropLast(".gpg".count)))
        }
        return names.sorted()
    }

    func run(client: VaultClient) async throws -> (report: String, note: String) {
        let names = try entries()
        var tally = MoveIn.Tally()
        for name in names {
            let destination = try ImportNaming.destination(forPassEntry: name)
            let secret = try show(name)
            try await MoveIn.store(secret, at: destination.key, options: try StoreOptions(label: destination.label),
                                   replace: replace, client: client, into: &tally, source: "pass \(name)")
        }
        var lines = ["Read \(names.count) entr\(names.count == 1 ? "y" : "ies") of the pass store at \(directory)."]
        lines += tally.lines()
        return (lines.joined(separator: "\n"), "imported the pass store \(directory) (\(names.count) entries): \(tally.note)")
    }

    /// `pass show NAME`: its standard output, exactly, in secure memory (at most one item's size).
    func show(_ name: String) throws -> SecureBytes {
        let shown: (output: (secret: SecureBytes, message: [UInt8]), waitStatus: Int32)
        do {
            shown = try ChildProcess.run(["pass", "show", name], stdin: .null, stdout: .pipe, stderr: .pipe) { output, errors in
                let secret = try SecretInput.readAll(fd: output, limit: WireLimits.secretBytes, what: "the pass entry \(name)")
                var message = [UInt8](repeating: 0, count: 2048)
                let got = message.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
                return (secret: secret, message: Array(message.prefix(max(got, 0))))
            }
        } catch ChildProcess.StartFailure.noPipe {
            throw VaultError.storageFailure("cannot make a pipe for `pass show`")
        } catch ChildProcess.StartFailure.notStarted(let code) {
            throw VaultError(.notFound, "cannot run `pass` (\(String(cString: strerror(code)))): install it (apt-get install pass), nothing was imported")
        }
        let status = shown.waitStatus
        guard status == 0 else {
            let said = String(decoding: shown.output.message, as: UTF8.self).trimmedWhitespace
            throw VaultError.storageFailure("`pass show \(name)` failed (\(said.isEmpty ? "exit status \(ChildProcess.exitStatus(status))" : said)); the entries before it were imported, run the import again once it works")
        }
        return shown.output.secret
    }
}
