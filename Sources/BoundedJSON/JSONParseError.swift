/// Why a byte sequence is not an acceptable JSON document.
///
/// The error names the problem and the byte offset, never the bytes themselves: the input may
/// carry secrets.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, without any input text.
    public enum Reason: String, Sendable, Equatable {
        case unexpectedEnd = "the document ends early"
        case unexpectedCharacter = "an unexpected character"
        case invalidNumber = "an invalid or out-of-range number"
        case invalidEscape = "an invalid escape sequence in a string"
        case loneSurrogate = "a \\u escape with an unpaired UTF-16 surrogate"
        case controlCharacter = "an unescaped control character in a string"
        case invalidUTF8 = "bytes that are not valid UTF-8"
        case tooDeep = "nesting deeper than the configured limit"
        case duplicateKey = "an object with the same key twice"
        case trailingData = "data after the end of the document"
    }

    /// What went wrong.
    public let reason: Reason
    /// The byte offset in the input where the problem was found.
    public let offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        "Invalid JSON: \(reason.rawValue) at byte \(offset). Send one RFC 8259 JSON document in UTF-8."
    }
}
