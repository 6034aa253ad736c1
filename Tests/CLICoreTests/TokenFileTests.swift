import Foundation
import CLIOptions
import Testing
import VaultCore
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault exec`'s token file: only in a private directory of the caller's, and
/// never written again once removed.
@Suite(.timeLimit(.minutes(20))) struct TokenFileTests {
    final class Runtime {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sv-rt-\(UUID().uuidString.prefix(8))").path
        init(mode: Int = 0o700) throws {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: mode])
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
        var environment: [String: String] { ["XDG_RUNTIME_DIR": path] }
    }

    static let token = SecureBytes(copying: Array("access-token".utf8))

    /// A refresh that lands after the command exited (exec removed the file) must not leave a valid
    /// token behind: 2 runs in 209 did on the old code.
    @Test func aWriteAfterRemoveLeavesNoFile() throws {
        let runtime = try Runtime()
        let file = try TokenFile(environment: runtime.environment)
        try file.write(Self.token)
        #expect(FileManager.default.contents(atPath: file.path) == Data("access-token".utf8))
        file.remove()
        try file.write(Self.token)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: runtime.path + "/sortedvault/exec") == [])
    }

    @Test func withoutXDGRuntimeDirThereIsNoFileAndAClearError() throws {
        #expect {
            _ = try TokenFile(environment: [:])
        } throws: { error in
            "\(error)".contains("XDG_RUNTIME_DIR is not set")
        }
    }

    @Test func aRuntimeDirectoryOthersMayWriteInIsRefused() throws {
        let runtime = try Runtime()
        chmod(runtime.path, 0o777)
        #expect {
            _ = try TokenFile(environment: runtime.environment)
        } throws: { error in
            "\(error)".contains("not a private directory of yours")
        }
        #expect(!FileManager.default.fileExists(atPath: runtime.path + "/sortedvault"))
    }

    @Test func aSymlinkedSortedvaultDirectoryIsRefused() throws {
        let runtime = try Runtime()
        let target = try Runtime()
        #expect(symlink(target.path, runtime.path + "/sortedvault") == 0)
        #expect {
            _ = try TokenFile(environment: runtime.environment)
        } throws: { error in
            "\(error)".contains("not a private directory of yours")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: target.path) == [])
    }
}
