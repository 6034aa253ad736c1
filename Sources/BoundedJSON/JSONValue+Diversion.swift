/// Which strings ``JSONValue/parse(_:maxDepth:divertingStringsAt:to:)`` hands over raw instead of
/// decoding them into `String`: a secret (base64 on the wire) can then go straight from the frame
/// into secure memory, without a heap copy that nobody wipes.
struct JSONStringDiversion {
    /// Dotted paths from the root, e.g. `parameters.secret`; no path runs through an array.
    let paths: Set<String>
    /// The last component of every path: the quick test made for every object key.
    let leafNames: Set<String>
    let deliver: (String, UnsafeRawBufferPointer) -> Void
    /// The object keys from the root to the value being parsed ("[]" for an array level).
    var path: [String] = []
    /// The paths already diverted, to refuse a second member of the same name.
    var divertedPaths: Set<String> = []

    func dottedPath(_ key: String) -> String {
        path.isEmpty ? key : path.joined(separator: ".") + "." + key
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
        let result = withoutActuallyEscaping(deliver) { deliver in
            var state = JSONStringDiversion(
                paths: paths, leafNames: Set(paths.map { String($0.split(separator: ".").last ?? "") }), deliver: deliver)
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
