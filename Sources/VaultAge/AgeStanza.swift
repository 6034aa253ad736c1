/// One recipient stanza of an age header: `-> type arguments…` and a base64 body wrapped at 64
/// columns. The body is the wrapped file key (ciphertext); the arguments are public.
struct AgeStanza: Sendable, Equatable {
    /// The first argument, such as `X25519` or `scrypt`.
    var type: String
    /// The arguments after the type.
    var arguments: [String]
    var body: [UInt8]

    /// Body bytes per full line: 64 base64 columns.
    static let bytesPerLine = 48

    /// The stanza's lines, each ending in LF; the body always ends with a line shorter than 64
    /// columns, empty when the body is a multiple of 48 bytes.
    func encoded() -> [UInt8] {
        var out = Array("-> ".utf8) + Array(([type] + arguments).joined(separator: " ").utf8) + [0x0A]
        var offset = 0
        while true {
            let end = min(offset + Self.bytesPerLine, body.count)
            out += AgeBase64.encode(Array(body[offset..<end])) + [0x0A]
            if end - offset < Self.bytesPerLine { break }
            offset = end
        }
        return out
    }
}
