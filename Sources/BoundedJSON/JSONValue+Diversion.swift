/// Which strings ``JSONValue/parse(_:maxDepth:divertingStringsAt:to:)`` hands over raw instead of
/// decoding them into `String`: a secret (base64 on the wire) can then go straight from the frame
/// into secure memory, without a heap copy that nobody wipes.
struct JSONStringDiversion {
    /// Dotted paths from the root, e.g. `parameters.secret`; no path runs through an array.
    var paths: Set<String> { declared.paths }
    /// The last component of every path: the quick test made for every object key.
    var leafNames: Set<String> { declared.leafNames }
    let declared: JSONDivertedPaths
    let deliver: (String, UnsafeRawBufferPointer) -> Void
    /// The object keys from the root to the value being parsed ("[]" for an array level).
    var path: [String] = []
    /// The paths already diverted, to refuse a second member of the same name.
    var divertedPaths: Set<String> = []

    func dottedPath(_ key: String) -> String {
        path.isEmpty ? key : path.joined(separator: ".") + "." + key
    }
}

/// The paths ``JSONValue/parse(_:maxDepth:divertingStringsAt:to:)`` diverts, prepared once: a
/// server that parses every frame against the same paths keeps one of these rather than building
/// the sets again for each frame.
public struct JSONDivertedPaths: Sendable {
    /// Dotted paths from the root, e.g. `parameters.secret`; no path runs through an array.
    public let paths: Set<String>
    /// The last component of every path.
    let leafNames: Set<String>

    public init(_ paths: Set<String>) {
        self.paths = paths
        leafNames = Set(paths.map { String($0.split(separator: ".").last ?? "") })
    }
}

extension JSONValue {
    /// Parses like ``parse(_:maxDepth:)``, but a string member at one of `paths` (dotted object
    /// keys from the root, e.g. `parameters.secret`) never becomes a `String`: its raw bytes
    /// between the quotes go to `deliver` with the path, and the member is left out of the result.
    ///
    /// ```swift
    /// let message = try JSONValue.parse(frame, divertingStringsAt: ["parameters.secret"]) { path, raw in
    ///     secret = SecureBytes(base64Encoded: raw)
    /// }
    /// ```
    ///
    /// The bytes are the JSON text as sent: escapes are not resolved, so a string with a backslash
    /// arrives with it (base64 has none; a base64 decoder then rejects it). The pointer is valid only
    /// during the call. A member at a path that is not a string is parsed as usual. A path given
    /// twice in one document is a duplicate key. Paths never match inside an array.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth, divertingStringsAt paths: Set<String>,
                             to deliver: (String, UnsafeRawBufferPointer) -> Void) throws(JSONParseError) -> JSONValue {
        try parse(bytes, maxDepth: maxDepth, diverting: JSONDivertedPaths(paths), to: deliver)
    }

    /// ``parse(_:maxDepth:divertingStringsAt:to:)`` with the paths prepared once (``JSONDivertedPaths``).
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth, diverting paths: JSONDivertedPaths,
                             to deliver: (String, UnsafeRawBufferPointer) -> Void) throws(JSONParseError) -> JSONValue {
        let result = withoutActuallyEscaping(deliver) { deliver in
            var state = JSONStringDiversion(declared: paths, deliver: deliver)
            return withUnsafeMutablePointer(to: &state) { pointer in
                Result { () throws(JSONParseError) -> JSONValue in
                    var parser = JSONParser(bytes: bytes, maxDepth: min(max(0, maxDepth), hardMaxDepth))
                    parser.diversion = pointer
                    parser.skipWhitespace()
                    let value = try parser.parseValue(depth: 0)
                    parser.skipWhitespace()
                    guard parser.position == bytes.count else { throw JSONParseError(.trailingData, at: parser.position) }
                    return value
                }
            }
        }
        return try result.get()
    }
}

extension JSONParser {
    /// If `key` (whose value starts at `position`) is a declared path holding a string, hands the
    /// raw string to the diversion and moves past it.
    mutating func divertIfDeclared(_ key: String, keyOffset: Int, members: [String: JSONValue],
                                   _ diversion: UnsafeMutablePointer<JSONStringDiversion>) throws(JSONParseError) -> Bool {
        guard diversion.pointee.leafNames.contains(key), position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            return false
        }
        let full = diversion.pointee.dottedPath(key)
        guard diversion.pointee.paths.contains(full) else { return false }
        guard members[key] == nil, diversion.pointee.divertedPaths.insert(full).inserted else {
            throw JSONParseError(.duplicateKey, at: keyOffset)
        }
        let start = position + 1
        var index = start
        while true {
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw JSONParseError(.controlCharacter, at: index) }
            index += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        diversion.pointee.deliver(full, UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        position = index + 1
        return true
    }
}
