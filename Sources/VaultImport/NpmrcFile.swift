/// npm's `.npmrc` (the `ini` package): `key=value` lines, `;` and `#` comment lines, values
/// optionally quoted. Registry credentials are keyed by npm's "nerf dart", the registry URL without
/// its scheme: `//registry.npmjs.org/:_authToken=npm_…`, `//host/:_password=base64` beside
/// `//host/:username=ada`, and the legacy unscoped `_auth=base64(user:password)`.
///
/// ```swift
/// let found = try NpmrcFile.parse(bytes, path: "/home/ada/.npmrc")
/// found[0].origin   // .npmRegistry(uri: "//registry.npmjs.org/", field: "_authToken")
/// ```
///
/// A value that names an environment variable (`${NPM_TOKEN}`) holds no secret and is left alone.
/// The secret is the value as written (`_auth` and `_password` stay base64, as npm wants them back).
/// Rewriting drops the line.
public enum NpmrcFile {
    public static let defaultRegistry = "//registry.npmjs.org/"
    static let fields = ["_authToken", "_auth", "_password"]

    struct Setting {
        let key: String
        let value: Range<Int>
        let line: LineSpan
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [FoundCredential] {
        try ImportFile.checkSize(bytes.count, path: path)
        let settings = try self.settings(bytes, path: path)
        let registry = settings.last { $0.key == "registry" }.flatMap { ByteText.text(bytes, $0.value) }.map(nerfDart) ?? defaultRegistry
        var found: [FoundCredential] = []
        for setting in settings {
            guard let field = fields.first(where: { setting.key == $0 || setting.key.hasSuffix(":" + $0) }),
                  !setting.value.isEmpty, !containsVariable(bytes, setting.value) else { continue }
            let uri = setting.key == field ? registry : String(setting.key.dropLast(field.count + 1))
            let user = settings.last { $0.key == uri + ":username" }.flatMap { ByteText.text(bytes, $0.value) }
            found.append(FoundCredential(
                source: .npmrc, path: path, origin: .npmRegistry(uri: uri, field: field), user: user,
                secret: ByteText.secret(bytes, setting.value), secretRanges: [setting.value], removal: [setting.line.full]))
        }
        return found
    }

    /// `https://registry.example.com/npm/` → `//registry.example.com/npm/`, as npm keys credentials.
    static func nerfDart(_ url: String) -> String {
        var rest = url[...]
        if let separator = url.firstRange(of: "//") { rest = url[separator.lowerBound...] }
        return rest.hasSuffix("/") ? String(rest) : String(rest) + "/"
    }

    static func containsVariable(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> Bool {
        guard range.count >= 3 else { return false }
        for index in range.lowerBound..<(range.upperBound - 1)
        where bytes[index] == UInt8(ascii: "$") && bytes[index + 1] == UInt8(ascii: "{") {
            return true
        }
        return false
    }

    static func settings(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [Setting] {
        var settings: [Setting] = []
        for line in ByteText.lines(bytes) {
            let content = ByteText.trimmed(bytes, line.content)
            guard !content.isEmpty, bytes[content.lowerBound] != UInt8(ascii: ";"), bytes[content.lowerBound] != UInt8(ascii: "#"),
                  bytes[content.lowerBound] != UInt8(ascii: "[") else { continue }
            guard let equals = ByteText.firstIndex(of: UInt8(ascii: "="), in: bytes, content),
                  let key = ByteText.text(bytes, ByteText.trimmed(bytes, content.lowerBound..<equals)) else { continue }
            var value = ByteText.trimmed(bytes, (equals + 1)..<content.upperBound)
            if value.count >= 2, bytes[value.lowerBound] == bytes[value.upperBound - 1],
               bytes[value.lowerBound] == UInt8(ascii: "\"") || bytes[value.lowerBound] == UInt8(ascii: "'") {
                value = (value.lowerBound + 1)..<(value.upperBound - 1)
            }
            settings.append(Setting(key: key, value: value, line: line))
            guard settings.count <= ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) settings")
            }
        }
        return settings
    }
}
