import Foundation
import TestSupport
import Testing

extension DaemonSuite {
    /// libsecret, and the GLib stack it pulls in, are loaded only when the keyring is used
    /// (`CSecretLoader`): a daemon on a key-file vault does not map them. The keyring suite checks the
    /// other side (`DaemonKeySourceTests`: a keyring daemon has loaded libsecret).
    @Suite struct LibraryLoadingTests {
        @Test func aDaemonThatDoesNotUseTheKeyringDoesNotMapLibsecretOrGLib() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { _ = cli.stopDaemon() }
            #expect(try cli.run(["store", "svc", "acct", "--no-autostart"], input: Data("token".utf8)).status == 0)
            #expect(try cli.run(["status", "--no-autostart"]).status == 0)
            let pid = try #require(cli.daemon?.pid)
            let mapped = Set(mappedFiles(of: pid).compactMap { $0.split(separator: "/").last.map(String.init) })
            #expect(mapped.contains { $0.hasPrefix("libsqlite3") }, "the map was not read: \(mapped)")
            for library in ["libsecret-1", "libglib-2.0", "libgio-2.0", "libgobject-2.0"] {
                #expect(!mapped.contains { $0.hasPrefix(library) }, "\(library) is mapped: \(mapped.sorted())")
            }
        }
    }
}
