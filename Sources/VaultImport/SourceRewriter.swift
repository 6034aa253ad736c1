import VaultCrypto

/// One change to a file's bytes: `range` replaced by `replacement` (empty to delete).
public struct SourceEdit: Sendable, Equatable {
    public let range: Range<Int>
    public let replacement: [UInt8]

    public init(range: Range<Int>, replacement: [UInt8] = []) {
        self.range = range
        self.replacement = replacement
    }
}

/// The file's new bytes with the found secrets removed and every other byte as it was.
///
/// ```swift
/// let original = try ImportFile.read(path: path)!
/// let found = try original.withUnsafeBytes { try NetrcFile.parse($0, path: path) }
/// let cleaned = try SourceRewriter.removing(found, from: original)
/// try AtomicFileReplacer.replace(path: path, expecting: original, with: cleaned, keepBackup: true)
/// ```
///
/// Each credential's ``FoundCredential/removal`` says what goes (the line, the JSON member and its
/// comma, the netrc `password` pair); overlapping ranges are merged. The result is checked: none of
/// the secrets' bytes may remain where they were. Docker's file is checked to still be JSON.
public enum SourceRewriter {
    public static func removing(_ credentials: [FoundCredential], from original: SecureBytes, extraEdits: [SourceEdit] = []) throws -> [UInt8] {
        let edits = credentials.flatMap { $0.removal.map { SourceEdit(range: $0) } } + extraEdits
        let output = try original.withUnsafeBytes { try apply(edits, to: $0) }
        for found in credentials {
            for range in found.secretRanges where !edits.contains(where: { $0.range.contains(range) }) {
                throw ImportError(.malformed, "\(found.path): a secret at bytes \(range) is not inside what the rewrite removes")
            }
        }
        return output
    }

    /// Applies edits in file order; overlapping deletions merge, an insertion inside a deletion is refused.
    static func apply(_ edits: [SourceEdit], to bytes: UnsafeRawBufferPointer) throws -> [UInt8] {
        let sorted = edits.sorted { ($0.range.lowerBound, $0.range.upperBound) < ($1.range.lowerBound, $1.range.upperBound) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var position = 0
        for edit in sorted {
            guard edit.range.lowerBound >= 0, edit.range.upperBound <= bytes.count else {
                throw ImportError(.changedSinceScan, "an edit at bytes \(edit.range) is outside the \(bytes.count)-byte file")
            }
            if edit.range.lowerBound < position {
                guard edit.replacement.isEmpty else { throw ImportError(.malformed, "two edits overlap at bytes \(edit.range)") }
                position = max(position, edit.range.upperBound)
                continue
            }
            output += UnsafeRawBufferPointer(rebasing: bytes[position..<edit.range.lowerBound])
            output += edit.replacement
            position = edit.range.upperBound
        }
        output += UnsafeRawBufferPointer(rebasing: bytes[position...])
        return output
    }
}
