import VaultCrypto

/// `.netrc` as curl and git's netrc helper read it: `machine HOST login USER password SECRET`,
/// tokens separated by any whitespace (an entry may span lines), `default` for any other host,
/// `macdef NAME` bodies (up to a blank line) skipped, `#` comments, and curl's double-quoted tokens.
///
/// ```swift
/// let found = try NetrcFile.parse(Array("machine git.example.com login ada password s3cret\n".utf8).withUnsafeBytes {
///     try NetrcFile.parse($0, path: "/home/ada/.netrc")
/// })
/// ```
///
/// A machine's credential is named as git's helper would store it for `https://HOST`; `default`
/// is reported but gets no name. Rewriting drops each `password SECRET` pair with the whitespace
/// before it, so `machine h login u` stays.
public enum NetrcFile {
    struct Token {
        let range: Range<Int>
        let quoted: Bool
    }

    struct Entry {
        var host: String?  // nil for `default`
        var login: String?
        var passwords: [(keyword: Token, value: Token)] = []
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [FoundCredential] {
        try ImportFile.checkSize(bytes.count, path: path)
        let tokens = try tokenize(bytes, path: path)
        var entries: [Entry] = []
        var current: Entry?
        var index = 0
        func malformed(_ token: Token, _ what: String) -> ImportError {
            ImportError(.malformed, "\(path) line \(lineNumber(bytes, token.range.lowerBound)): \(what)")
        }
        func value(after keyword: Token) throws -> Token {
            guard index + 1 < tokens.count else { throw malformed(keyword, "a keyword without its value") }
            index += 1
            return tokens[index]
        }
        while index < tokens.count {
            let token = tokens[index]
            let word = ByteText.text(bytes, token.range) ?? ""
            switch token.quoted ? "" : word {
            case "machine":
                if let current { entries.append(current) }
                let host = try value(after: token)
                guard let name = ByteText.text(bytes, host.range) else { throw malformed(host, "the machine name is not UTF-8") }
                current = Entry(host: name)
            case "default":
                if let current { entries.append(current) }
                current = Entry(host: nil)
            case "login", "password", "account":
                let argument = try value(after: token)
                guard current != nil else { throw malformed(token, "\(word) before any machine") }
                if word == "login" {
                    current?.login = ByteText.text(bytes, argument.range)
                } else if word == "password" {
                    current?.passwords.append((token, argument))
                }
            case "macdef":
                if let current { entries.append(current) }
                current = nil
                index = skipMacro(bytes, tokens, after: try value(after: token))
                continue
            default:
                throw malformed(token, "an unknown keyword")
            }
            index += 1
            guard entries.count <= ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) machines")
            }
        }
        if let current { entries.append(current) }
        return entries.compactMap { credential(bytes, $0, path: path) }
    }

    static func credential(_ bytes: UnsafeRawBufferPointer, _ entry: Entry, path: String) -> FoundCredential? {
        guard let last = entry.passwords.last else { return nil }
        let origin: CredentialOrigin = entry.host.map { .git(protocol: "https", host: $0, path: nil) } ?? .unnamed("netrc default entry")
        return FoundCredential(
            source: .netrc, path: path, origin: origin, user: entry.login, secret: secret(bytes, last.value),
            secretRanges: entry.passwords.map { $0.value.range },
            removal: entry.passwords.map { pairRemoval(bytes, from: $0.keyword.range.lowerBound, to: $0.value.range.upperBound) })
    }

    /// `password SECRET` with the whitespace before it (or after it, when it starts the file).
    static func pairRemoval(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) -> Range<Int> {
        var lower = start
        while lower > 0 && ByteText.isSpace(bytes[lower - 1]) { lower -= 1 }
        if lower > 0 { return lower..<end }
        var upper = end
        while upper < bytes.count && ByteText.isSpace(bytes[upper]) { upper += 1 }
        return start..<upper
    }

    /// The token's text in secure memory; a quoted token's `\"`, `\\`, `\n`, `\r`, `\t` resolved as curl does.
    static func secret(_ bytes: UnsafeRawBufferPointer, _ token: Token) -> SecureBytes {
        guard token.quoted else { return ByteText.secret(bytes, token.range) }
        let inner = (token.range.lowerBound + 1)..<(token.range.upperBound - 1)
        func decode(_ put: (UInt8) -> Void) {
            var index = inner.lowerBound
            while index < inner.upperBound {
                var byte = bytes[index]
                if byte == UInt8(ascii: "\\"), index + 1 < inner.upperBound {
                    index += 1
                    switch bytes[index] {
                    case UInt8(ascii: "n"): byte = 0x0A
                    case UInt8(ascii: "r"): byte = 0x0D
                    case UInt8(ascii: "t"): byte = 0x09
                    default: byte = bytes[index]
                    }
                }
                put(byte)
                index += 1
            }
        }
        return ByteText.secureBytes(decode)
    }

    static func tokenize(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [Token] {
        var tokens: [Token] = []
        var index = 0
        while index < bytes.count {
            if ByteText.isSpace(bytes[index]) { index += 1; continue }
            if bytes[index] == UInt8(ascii: "#") {
                while index < bytes.count && bytes[index] != 0x0A { index += 1 }
                continue
            }
            let start = index
            if bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while index < bytes.count && bytes[index] != UInt8(ascii: "\"") {
                    index += bytes[index] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard index < bytes.count else {
                    throw ImportError(.malformed, "\(path) line \(lineNumber(bytes, start)): a quoted token is not closed")
                }
                index += 1
                tokens.append(Token(range: start..<index, quoted: true))
            } else {
                while index < bytes.count && !ByteText.isSpace(bytes[index]) { index += 1 }
                tokens.append(Token(range: start..<index, quoted: false))
            }
            guard tokens.count <= 8 * ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(path): more than \(8 * ImportLimits.maximumEntries) words")
            }
        }
        return tokens
    }

    /// The index of the first token after a macro body, which ends at the first blank line.
    static func skipMacro(_ bytes: UnsafeRawBufferPointer, _ tokens: [Token], after name: Token) -> Int {
        var position = name.range.upperBound
        while position < bytes.count && bytes[position] != 0x0A { position += 1 }
        var bodyEnd = bytes.count
        var index = position
        while index + 1 < bytes.count {
            if bytes[index] == 0x0A {
                var next = index + 1
                if next < bytes.count && bytes[next] == 0x0D { next += 1 }
                if next < bytes.count && bytes[next] == 0x0A { bodyEnd = next; break }
            }
            index += 1
        }
        return tokens.firstIndex { $0.range.lowerBound > bodyEnd } ?? tokens.count
    }

    static func lineNumber(_ bytes: UnsafeRawBufferPointer, _ offset: Int) -> Int {
        var count = 1
        for index in 0..<min(offset, bytes.count) where bytes[index] == 0x0A { count += 1 }
        return count
    }
}
