extension JSONValue {
    /// Resolves the escapes of a raw JSON string (the bytes between its quotes, as
    /// ``parse(_:maxDepth:diverting:to:)`` hands a diverted string over) into `out`, without a
    /// `String` or any other heap copy: a secret sent as JSON text goes straight into the caller's
    /// memory. Returns the number of bytes the string decodes to.
    ///
    /// With `out` nil nothing is written and only the length is computed, so that a caller can check
    /// it and allocate exactly that much first:
    ///
    /// ```swift
    /// let count = try JSONValue.unescape(raw, into: nil)
    /// let token = try SecureBytes(count: count) { _ = try JSONValue.unescape(raw, into: $0) }
    /// ```
    ///
    /// Bytes other than escapes are copied unchanged (the parser that diverted the string has already
    /// refused control characters; non-ASCII bytes are not checked here). Errors give offsets within
    /// `raw`, never its bytes. `out` must hold at least the returned count (`raw.count` always does).
    @discardableResult
    public static func unescape(_ raw: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer?) throws(JSONParseError) -> Int {
        var written = 0
        var index = 0
        func put(_ byte: UInt8) {
            if let out { out[written] = byte }
            written += 1
        }
        while index < raw.count {
            let byte = raw[index]
            if byte < 0x20 { throw JSONParseError(.controlCharacter, at: index) }
            guard byte == UInt8(ascii: "\\") else {
                put(byte)
                index += 1
                continue
            }
            guard index + 1 < raw.count else { throw JSONParseError(.unexpectedEnd, at: index + 1) }
            let escapeStart = index
            index += 2
            switch raw[escapeStart + 1] {
            case UInt8(ascii: "\""): put(0x22)
            case UInt8(ascii: "\\"): put(0x5C)
            case UInt8(ascii: "/"): put(0x2F)
            case UInt8(ascii: "b"): put(0x08)
            case UInt8(ascii: "f"): put(0x0C)
            case UInt8(ascii: "n"): put(0x0A)
            case UInt8(ascii: "r"): put(0x0D)
            case UInt8(ascii: "t"): put(0x09)
            case UInt8(ascii: "u"):
                let (scalar, length) = try unicodeEscape(raw, at: escapeStart)
                index = escapeStart + length
                utf8(of: scalar, put)
            default:
                throw JSONParseError(.invalidEscape, at: escapeStart)
            }
        }
        return written
    }

    /// The scalar of the `\uXXXX` escape at `escapeStart` (of a surrogate pair, both escapes), and
    /// how many bytes of `raw` it takes.
    private static func unicodeEscape(_ raw: UnsafeRawBufferPointer, at escapeStart: Int) throws(JSONParseError) -> (UInt32, Int) {
        let unit = try hex4(raw, at: escapeStart + 2)
        if (0xDC00...0xDFFF).contains(unit) { throw JSONParseError(.loneSurrogate, at: escapeStart) }
        guard (0xD800...0xDBFF).contains(unit) else { return (UInt32(unit), 6) }
        let next = escapeStart + 6
        guard next + 1 < raw.count, raw[next] == UInt8(ascii: "\\"), raw[next + 1] == UInt8(ascii: "u") else {
            throw JSONParseError(.loneSurrogate, at: escapeStart)
        }
        let low = try hex4(raw, at: next + 2)
        guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
        return (0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00), 12)
    }

    /// `scalar`'s UTF-8 bytes, by hand: `UTF8.encode` would build an array for each scalar.
    private static func utf8(of scalar: UInt32, _ put: (UInt8) -> Void) {
        switch scalar {
        case 0..<0x80:
            put(UInt8(scalar))
        case 0x80..<0x800:
            put(UInt8(0xC0 | (scalar >> 6)))
            put(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            put(UInt8(0xE0 | (scalar >> 12)))
            put(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            put(UInt8(0x80 | (scalar & 0x3F)))
        default:
            put(UInt8(0xF0 | (scalar >> 18)))
            put(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            put(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            put(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// The value of the four hex digits at `start` of `raw` (the parser's reading of them).
    private static func hex4(_ raw: UnsafeRawBufferPointer, at start: Int) throws(JSONParseError) -> UInt16 {
        let (value, end) = JSONParser.hex4(raw, from: start)
        guard let value else { throw JSONParseError(end >= raw.count ? .unexpectedEnd : .invalidEscape, at: end) }
        return value
    }
}
