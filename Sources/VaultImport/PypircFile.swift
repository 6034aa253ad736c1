/// `.pypirc` as twine reads it (Python's RawConfigParser): `[section]` headers, `key = value` or
/// `key: value` options with case-insensitive keys, values continued on more-indented lines, `#`
/// and `;` comment lines.
///
/// ```ini
/// [pypi]
/// username = __token__
/// password = pypi-AgEI…
/// ```
///
/// Each section with a `password` is one credential for its upload URL: `repository` when the
/// section sets it, else twine's default for `pypi` (`https://upload.pypi.org/legacy/`) and
/// `testpypi` (`https://test.pypi.org/legacy/`); the user is the section's `username`, else
/// `[server-login]`'s, else `__token__` for a `pypi-` API token. `[server-login]`'s own password and a
/// custom section without `repository` are reported unnamed. Rewriting drops the `password` line
/// (and its continuation lines).
public enum PypircFile {
    public static let defaultRepository = "https://upload.pypi.org/legacy/"
    public static let testRepository = "https://test.pypi.org/legacy/"

    struct Option {
        let key: String
        var value: [Range<Int>]
        var lines: [LineSpan]
        let indent: Int
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [FoundCredential] {
        try ImportFile.checkSize(bytes.count, path: path)
        let sections = try self.sections(bytes, path: path)
        let fallbackUser = sections.first { $0.name == "server-login" }?.options.last { $0.key == "username" }
            .flatMap { text(bytes, $0) }
        var found: [FoundCredential] = []
        for section in sections {
            guard let password = section.options.last(where: { $0.key == "password" }) else { continue }
            let secret = ByteText.joinedSecret(bytes, password.value)
            var user = section.options.last { $0.key == "username" }.flatMap { text(bytes, $0) } ?? fallbackUser
            if user == nil && secret.withUnsafeBytes({ $0.starts(with: "pypi-".utf8) }) { user = "__token__" }
            let removal = section.options.filter { $0.key == "password" }
            found.append(FoundCredential(
                source: .pypirc, path: path, origin: origin(section, bytes), user: user, secret: secret,
                secretRanges: removal.flatMap(\.value), removal: removal.flatMap { $0.lines.map(\.full) }))
        }
        return found
    }

    static func origin(_ section: (name: String, options: [Option]), _ bytes: UnsafeRawBufferPointer) -> CredentialOrigin {
        let given = section.options.last { $0.key == "repository" }.flatMap { text(bytes, $0) }
        switch (section.name, given) {
        case (_, let url?): return .pythonRepository(url: normalized(url))
        case ("pypi", nil): return .pythonRepository(url: defaultRepository)
        case ("testpypi", nil): return .pythonRepository(url: testRepository)
        default: return .unnamed("pypirc [\(section.name)] without a repository")
        }
    }

    /// twine's `normalize_repository_url`: PyPI's own hosts always over https; the scheme in lower case.
    static func normalized(_ url: String) -> String {
        guard let separator = url.firstRange(of: "://") else { return url }
        let scheme = url[..<separator.lowerBound].lowercased()
        let rest = url[separator.upperBound...]
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let pypiHosts: Set<Substring> = ["pypi.python.org", "testpypi.python.org", "upload.pypi.org", "test.pypi.org"]
        return (pypiHosts.contains(host) ? "https" : scheme) + "://" + rest
    }

    static func text(_ bytes: UnsafeRawBufferPointer, _ option: Option) -> String? {
        ByteText.joinedSecret(bytes, option.value).withUnsafeBytes { String(validating: $0, as: UTF8.self) }
    }

    static func sections(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [(name: String, options: [Option])] {
        var sections: [(name: String, options: [Option])] = []
        for line in ByteText.lines(bytes) {
            let content = ByteText.trimmed(bytes, line.content)
            if content.isEmpty || bytes[content.lowerBound] == UInt8(ascii: "#") || bytes[content.lowerBound] == UInt8(ascii: ";") {
                continue
            }
            let indent = content.lowerBound - line.content.lowerBound
            if let last = sections.last?.options.last, indent > last.indent {
                sections[sections.count - 1].options[sections[sections.count - 1].options.count - 1].value.append(content)
                sections[sections.count - 1].options[sections[sections.count - 1].options.count - 1].lines.append(line)
                continue
            }
            if bytes[content.lowerBound] == UInt8(ascii: "["), bytes[content.upperBound - 1] == UInt8(ascii: "]"), content.count > 2 {
                guard let name = ByteText.text(bytes, (content.lowerBound + 1)..<(content.upperBound - 1)) else {
                    throw ImportError(.malformed, "\(path) line \(line.number): the section name is not UTF-8")
                }
                sections.append((name, []))
                guard sections.count <= ImportLimits.maximumEntries else {
                    throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) sections")
                }
                continue
            }
            guard !sections.isEmpty else {
                throw ImportError(.malformed, "\(path) line \(line.number): an option before any [section]")
            }
            var delimiter = content.lowerBound
            while delimiter < content.upperBound && bytes[delimiter] != UInt8(ascii: "=") && bytes[delimiter] != UInt8(ascii: ":") {
                delimiter += 1
            }
            guard delimiter < content.upperBound,
                  let key = ByteText.text(bytes, ByteText.trimmed(bytes, content.lowerBound..<delimiter)) else {
                throw ImportError(.malformed, "\(path) line \(line.number): not `key = value`")
            }
            let value = ByteText.trimmed(bytes, (delimiter + 1)..<content.upperBound)
            sections[sections.count - 1].options.append(Option(key: key.lowercased(), value: [value], lines: [line], indent: indent))
        }
        return sections
    }
}
