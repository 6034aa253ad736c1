import BoundedJSON
import VaultCrypto

extension DockerConfigFile {
    /// The edit that sets `credsStore` to `helper` (e.g. `sortedvault`), so docker asks the helper
    /// for every registry once the file holds no secrets: the value replaced when the member exists,
    /// else a member inserted first, indented like the one after it.
    ///
    /// ```swift
    /// let edit = try DockerConfigFile.settingCredentialStore("sortedvault", in: original, path: path)
    /// let cleaned = try SourceRewriter.removing(scan.credentials, from: original, extraEdits: [edit])
    /// ```
    public static func settingCredentialStore(_ helper: String, in original: SecureBytes, path: String) throws -> SourceEdit {
        var quoted: [UInt8] = []
        JSONValue.string(helper).write(into: &quoted)
        return try original.withUnsafeBytes { bytes in
            let spans = JSONSpans(bytes: bytes, maximumDepth: ImportLimits.maximumJSONDepth)
            let root: JSONObjectSpan
            do {
                root = try spans.object(at: spans.skipWhitespace(0))
            } catch let error as JSONParseError {
                throw ImportError(.malformed, "\(path) is not docker's JSON: \(error.reason.rawValue) at byte \(error.offset)")
            }
            if let existing = root.member("credsStore") {
                return SourceEdit(range: existing.value, replacement: quoted)
            }
            guard let first = root.members.first else {
                return SourceEdit(range: (root.open + 1)..<root.close, replacement: Array(#""credsStore": "#.utf8) + quoted)
            }
            let indentation = Array(UnsafeRawBufferPointer(rebasing: bytes[(root.open + 1)..<first.keyStart]))
            return SourceEdit(range: first.keyStart..<first.keyStart,
                              replacement: Array(#""credsStore": "#.utf8) + quoted + [UInt8(ascii: ",")] + indentation)
        }
    }
}
