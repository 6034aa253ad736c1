import BoundedJSON
import VaultCrypto

/// docker's `config.json`: the logins in `auths` that docker keeps in the file when no credential
/// store is set, `{"auths":{"ghcr.io":{"auth":"base64(user:password)"}}}`, with an `identitytoken`
/// beside `auth` for registries that sign in by token.
///
/// ```swift
/// let scan = try DockerConfigFile.parse(bytes, path: "/home/ada/.docker/config.json")
/// scan.credentials        // one per registry with a secret
/// scan.credentialStore    // "desktop" when docker already uses a helper
/// ```
///
/// Rewriting removes the `auth` and `identitytoken` members (with their commas; an entry left empty
/// becomes `{}`, as docker writes it beside a helper). The whole document must be valid JSON
/// (BoundedJSON decides), the secret members are read straight into secure memory.
public enum DockerConfigFile {
    public struct Scan: Sendable {
        public let credentials: [FoundCredential]
        /// `credsStore`: the helper docker uses for every registry, when set.
        public let credentialStore: String?
        /// `credHelpers`: per-registry helpers, registry → helper name.
        public let credentialHelpers: [String: String]
    }

    static let secretMembers = ["auth", "identitytoken"]

    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> Scan {
        try ImportFile.checkSize(bytes.count, path: path)
        let spans = JSONSpans(bytes: bytes, maximumDepth: ImportLimits.maximumJSONDepth)
        let root: JSONObjectSpan
        let registries: [(name: String, object: JSONObjectSpan)]
        do {
            root = try spans.object(at: spans.skipWhitespace(0))
            registries = try authEntries(root, spans)
        } catch {
            throw ImportError(.malformed, "\(path) is not docker's JSON: \(error.reason.rawValue) at byte \(error.offset)")
        }
        guard registries.count <= ImportLimits.maximumEntries else {
            throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) registries in auths")
        }
        let value = try validate(bytes, registries: registries, path: path)
        var credentials: [FoundCredential] = []
        for (name, object) in registries {
            if let found = try credential(bytes, registry: name, object: object, path: path) { credentials.append(found) }
        }
        var helpers: [String: String] = [:]
        for (registry, helper) in value["credHelpers"]?.objectValue ?? [:] {
            if let helper = helper.stringValue { helpers[registry] = helper }
        }
        return Scan(credentials: credentials, credentialStore: value["credsStore"]?.stringValue, credentialHelpers: helpers)
    }

    static func authEntries(_ root: JSONObjectSpan, _ spans: JSONSpans) throws(JSONParseError) -> [(name: String, object: JSONObjectSpan)] {
        guard let auths = root.member("auths"), spans.bytes[auths.value.lowerBound] == UInt8(ascii: "{") else { return [] }
        var entries: [(name: String, object: JSONObjectSpan)] = []
        for entry in try spans.object(at: auths.value.lowerBound, depth: 1).members
        where spans.bytes[entry.value.lowerBound] == UInt8(ascii: "{") {
            entries.append((String(decoding: entry.key, as: UTF8.self), try spans.object(at: entry.value.lowerBound, depth: 2)))
        }
        return entries
    }

    /// Has BoundedJSON read the whole document, the secret members diverted (never a `String`), and
    /// checks that it found them exactly where the spans say.
    static func validate(_ bytes: UnsafeRawBufferPointer, registries: [(name: String, object: JSONObjectSpan)],
                         path: String) throws -> JSONValue {
        var expected: [Int: Int] = [:]  // content start → content end
        var paths: Set<String> = []
        for (name, object) in registries {
            for member in secretMembers {
                guard let span = object.member(member), span.isString else { continue }
                paths.insert("auths.\(name).\(member)")
                expected[span.stringContent.lowerBound] = span.stringContent.upperBound
            }
        }
        var misplaced = false
        let base = bytes.baseAddress
        do {
            let value = try JSONValue.parse(bytes, maxDepth: ImportLimits.maximumJSONDepth, divertingStringsAt: paths) { _, raw in
                let start = raw.baseAddress.flatMap { pointer in base.map { pointer - $0 } } ?? -1
                if expected.removeValue(forKey: start) != start + raw.count { misplaced = true }
            }
            guard !misplaced, expected.isEmpty else {
                throw ImportError(.malformed, "\(path): the registry names in auths are ambiguous; edit the file by hand")
            }
            return value
        } catch let error as JSONParseError {
            throw ImportError(.malformed, "\(path) is not valid JSON: \(error.reason.rawValue) at byte \(error.offset)")
        }
    }

    static func credential(_ bytes: UnsafeRawBufferPointer, registry: String, object: JSONObjectSpan, path: String) throws -> FoundCredential? {
        var removed: Set<Int> = []
        var secretRanges: [Range<Int>] = []
        for (index, member) in object.members.enumerated()
        where member.isString && secretMembers.contains(where: { member.key.elementsEqual($0.utf8) }) && member.stringContent.count > 0 {
            removed.insert(index)
            secretRanges.append(member.stringContent)
        }
        guard !removed.isEmpty else { return nil }
        let place = "\(path): auths[\(registry.debugDescription)]"
        var user: String?
        var password: SecureBytes?
        if let auth = object.member("auth"), auth.isString, auth.stringContent.count > 0 {
            (user, password) = try decodeAuth(bytes, auth.stringContent, place: place)
        }
        let removal = JSONSpans.removal(of: removed, from: object)
        if let token = object.member("identitytoken"), token.isString, token.stringContent.count > 0 {
            return FoundCredential(source: .dockerConfig, path: path, origin: .dockerRegistry(serverURL: registry, identityToken: true),
                                   user: user, secret: try unescaped(bytes, token.stringContent, place: place),
                                   secretRanges: secretRanges, removal: removal)
        }
        guard let password else { return nil }
        return FoundCredential(source: .dockerConfig, path: path, origin: .dockerRegistry(serverURL: registry, identityToken: false),
                               user: user, secret: password, secretRanges: secretRanges, removal: removal)
    }

    /// docker's `decodeAuth`: base64 of `user:password`, split at the first colon, NULs trimmed
    /// from the password's ends.
    static func decodeAuth(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, place: String) throws -> (String, SecureBytes) {
        let text = try unescaped(bytes, range, place: place)
        guard let decoded = text.withUnsafeBytes({ SecureBytes(base64Encoded: $0) }) else {
            throw ImportError(.malformed, "\(place).auth is not base64")
        }
        return try decoded.withUnsafeBytes { raw in
            guard let colon = ByteText.firstIndex(of: UInt8(ascii: ":"), in: raw, 0..<raw.count) else {
                throw ImportError(.malformed, "\(place).auth is not base64 of user:password")
            }
            guard let user = ByteText.text(raw, 0..<colon) else { throw ImportError(.malformed, "\(place).auth: the user is not UTF-8") }
            var lower = colon + 1
            var upper = raw.count
            while lower < upper && raw[lower] == 0 { lower += 1 }
            while upper > lower && raw[upper - 1] == 0 { upper -= 1 }
            return (user, ByteText.secret(raw, lower..<upper))
        }
    }

    static func unescaped(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>, place: String) throws -> SecureBytes {
        let raw = UnsafeRawBufferPointer(rebasing: bytes[range])
        do {
            let count = try JSONValue.unescape(raw, into: nil)
            return try SecureBytes(count: count) { out throws(JSONParseError) in _ = try JSONValue.unescape(raw, into: out) }
        } catch let error as JSONParseError {
            throw ImportError(.malformed, "\(place): \(error.reason.rawValue)")
        }
    }
}
