import Foundation
import TestSupport

/// A throw-away `pass` store for docker-credential-pass, the reference docker helper: its own
/// GNUPGHOME with a fresh passphrase-less key, and a store initialised for it. `stop()` ends the
/// gpg-agent that gpg started for it.
struct PassStore {
    let gnupgHome: String
    let storeDirectory: String

    var environment: [String: String] {
        ["GNUPGHOME": gnupgHome, "PASSWORD_STORE_DIR": storeDirectory]
    }

    init(root: String) throws {
        gnupgHome = root + "/gnupg"
        storeDirectory = root + "/pass-store"
        try FileManager.default.createDirectory(atPath: gnupgHome, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let base = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        let (generated, _, generateErr) = try Subprocess.run(
            ["/usr/bin/gpg", "--batch", "--passphrase", "", "--quick-gen-key", "sortedvault test <test@invalid>", "default", "default", "never"],
            environment: base, input: Data())
        guard generated == 0 else { throw HarnessError("gpg could not make a test key: \(String(decoding: generateErr, as: UTF8.self))") }
        let (_, listing, _) = try Subprocess.run(["/usr/bin/gpg", "--list-keys", "--with-colons"], environment: base, input: Data())
        guard let fingerprint = String(decoding: listing, as: UTF8.self).split(separator: "\n")
            .first(where: { $0.hasPrefix("fpr:") })?.split(separator: ":", omittingEmptySubsequences: false).dropFirst(9).first else {
            throw HarnessError("gpg listed no fingerprint for the test key")
        }
        let (initialised, _, initErr) = try Subprocess.run(["/usr/bin/pass", "init", String(fingerprint)], environment: base, input: Data())
        guard initialised == 0 else { throw HarnessError("pass init failed: \(String(decoding: initErr, as: UTF8.self))") }
    }

    func stop() {
        let base = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        _ = try? Subprocess.run(["/usr/bin/gpgconf", "--kill", "gpg-agent"], environment: base, input: Data())
    }
}
