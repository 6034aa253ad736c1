import Foundation
import Testing
import VaultPolicy
#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp with safe permissions, removed by ``remove()``.
struct TemporaryPolicyDirectory {
    let path: String

    init() throws {
        var template = Array("/tmp/sortedvault-policy-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else { throw CocoaError(.fileWriteUnknown) }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        chmod(path, 0o755)
    }

    /// Writes `text` to `name` with `mode`, bypassing the umask.
    @discardableResult
    func write(_ name: String, _ text: String, mode: mode_t = 0o644) throws -> String {
        let file = path + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, mode)
        return file
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    static let rule = """
        [[rule]]
        name = "owner"
        effect = "allow"
        uids = ["@self"]
        operations = ["*"]
        services = ["*"]

        """
}

/// Runs `body` and returns the `PolicyError` it throws, recording an issue when it does not.
func policyError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> PolicyError? {
    do {
        try body()
        Issue.record("expected a PolicyError, got success", sourceLocation: sourceLocation)
    } catch let error as PolicyError {
        return error
    } catch {
        Issue.record("expected a PolicyError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
