/// git's `store` helper file (git-credential-store(1)): one `PROTOCOL://USER:PASSWORD@HOST[/PATH]`
/// a line, each part percent-encoded.
///
/// ```swift
/// let found = try GitCredentialsFile.parse(bytes, path: "/home/ada/.git-credentials")
/// found[0].origin   // .git(protocol: "https", host: "github.com", path: nil)
/// ```
///
/// Lines git itself would skip (no `://`, no user or password) are skipped here too. Rewriting drops
/// a found credential's whole line.
public enum GitCredentialsFile {
    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [FoundCredential] {
        try ImportFile.checkSize(bytes.count, path: path)
        var found: [FoundCredential] = []
        for line in ByteText.lines(bytes) {
            guard let entry = try parseLine(bytes, line, path: path) else { continue }
            found.append(entry)
            guard found.count <= ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) credentials")
            }
        }
        return found
    }

    /// As git's `credential_from_url`: the first `@` after `://` ends the user and password, the
    /// first `/` after it starts the path, whose outer slashes are dropped.
    static func parseLine(_ bytes: UnsafeRawBufferPointer, _ line: LineSpan, path: String) throws -> FoundCredential? {
        let range = line.content
        guard let schemeEnd = find("://", in: bytes, range) else { return nil }
        let authorityStart = schemeEnd + 3
        let rest = authorityStart..<range.upperBound
        let slash = ByteText.firstIndex(of: UInt8(ascii: "/"), in: bytes, rest) ?? range.upperBound
        guard let at = ByteText.firstIndex(of: UInt8(ascii: "@"), in: bytes, authorityStart..<slash),
              let colon = ByteText.firstIndex(of: UInt8(ascii: ":"), in: bytes, authorityStart..<at) else {
            return nil  // git's store skips entries without both user and password
        }
        let place = "\(path) line \(line.number)"
        guard let scheme = ByteText.text(bytes, range.lowerBound..<schemeEnd), !scheme.isEmpty,
              let user = ByteText.percentDecodedText(bytes, authorityStart..<colon),
              let host = ByteText.percentDecodedText(bytes, (at + 1)..<slash),
              let rawPath = ByteText.percentDecodedText(bytes, slash..<range.upperBound) else {
            throw ImportError(.malformed, "\(place): the URL's protocol, user, host or path is not UTF-8 text")
        }
        let trimmedPath = String(rawPath.drop { $0 == "/" }.reversed().drop { $0 == "/" }.reversed())
        let secretRange = (colon + 1)..<at
        return FoundCredential(
            source: .gitCredentials, path: path,
            origin: .git(protocol: scheme, host: host, path: trimmedPath.isEmpty ? nil : trimmedPath),
            user: user, secret: ByteText.percentDecodedSecret(bytes, secretRange),
            secretRanges: [secretRange], removal: [line.full])
    }

    static func find(_ needle: StaticString, in bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Int? {
        let count = needle.utf8CodeUnitCount
        guard range.count >= count else { return nil }
        for start in range.lowerBound...(range.upperBound - count)
        where ByteText.equals(bytes, start..<(start + count), needle) {
            return start
        }
        return nil
    }
}
