import Foundation
import Testing
import VaultCrypto
@testable import VaultImport

/// A private directory for one test's files, removed at the end, and the checks every format's
/// tests share: parse a file as read from disk, rewrite it, and look for the secrets in the result.
final class ImportFixture {
    let directory: String

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/vault-import-XXXXXX").utf8CString)
        guard mkdtemp(&template) != nil else { throw ImportFixtureError("mkdtemp failed") }
        directory = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    @discardableResult
    func write(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let path = directory + "/" + name
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, mode_t(mode))
        return path
    }

    func contents(_ path: String) throws -> String {
        String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
    }

    /// Reads `path` as the CLI will and parses it as `source`.
    func scan(_ path: String, as source: ImportSource) throws -> (original: SecureBytes, found: [FoundCredential]) {
        let original = try #require(try ImportFile.read(path: path))
        let found = try original.withUnsafeBytes { try ImportScan.parse($0, source: source, path: path) }
        return (original, found)
    }

    /// The rewritten text, checked to hold none of the secrets, neither as written nor decoded.
    func rewritten(_ original: SecureBytes, _ found: [FoundCredential], extraEdits: [SourceEdit] = [],
                   secrets: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let output = try SourceRewriter.removing(found, from: original, extraEdits: extraEdits)
        for secret in secrets {
            #expect(output.firstRange(of: Array(secret.utf8)) == nil, "a secret is still in the output", sourceLocation: sourceLocation)
        }
        original.withUnsafeBytes { raw in
            for credential in found {
                for range in credential.secretRanges {
                    let written = Array(UnsafeRawBufferPointer(rebasing: raw[range]))
                    #expect(output.firstRange(of: written) == nil, "a secret, as written, is still in the output", sourceLocation: sourceLocation)
                }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}

func text(_ secret: SecureBytes) -> String {
    secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
}

struct ImportFixtureError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
