extension JSONValue {
    /// The default nesting limit of ``parse(_:maxDepth:)``.
    public static let defaultMaxDepth = 64

    /// The nesting limit no caller can raise: the parser recurses once per level, and event loop
    /// threads do not have deep stacks.
    public static let hardMaxDepth = 1000

    /// Parses one strict RFC 8259 document.
    ///
    /// ```swift
    /// let value = try JSONValue.parse(Array(#"{"a": [1, 2.5, null]}"#.utf8))
    /// ```
    ///
    /// The parser rejects invalid UTF-8, unpaired surrogate escapes, duplicate object keys,
    /// numbers out of `Double` range, and anything after the document but whitespace. Nesting
    /// deeper than `maxDepth` fails with ``JSONParseError/Reason/tooDeep`` before recursing
    /// further, so hostile input such as 100,000 `[` cannot exhaust the stack. Sizes are bounded
    /// by the input: bound the input before calling.
    public static func parse(_ bytes: some Collection<UInt8>, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        let copy = Array(bytes)
        let result = copy.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONValue in try parse(raw, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one strict RFC 8259 document from raw memory; see ``parse(_:maxDepth:)``.
    public static func parse(_ bytes: UnsafeRawBufferPointer, maxDepth: Int = defaultMaxDepth) throws(JSONParseError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: min(max(0, maxDepth), hardMaxDepth))
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace()
        guard parser.position == bytes.count else { throw JSONParseError(.trailingData, at: parser.position) }
        return value
    }
}

/// A recursive-descent parser whose recursion depth is bounded by `maxDepth`.
struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    let maxDepth: Int
    var position = 0
    /// Set only by ``JSONValue/parse(_:maxDepth:divertingStringsAt:to:)``, for the duration of that
    /// call. A pointer rather than the state itself: the parser stays a struct of trivial fields (with
    /// a non-trivial field, Swift 6.3.1's optimizer crashed on `parseHex4` in release builds).
    var diversion: UnsafeMutablePointer<JSONStringDiversion>?

    init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    private func fail(_ reason: JSONParseError.Reason) -> JSONParseError {
        JSONParseError(position >= bytes.count ? .unexpectedEnd : reason, at: position)
    }

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard let byte = peek() else { throw fail(.unexpectedEnd) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail(.unexpectedCharacter)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        let start = literal.utf8Start
        for index in 0..<count {
            guard peek() == start[index] else { throw fail(.unexpectedCharacter) }
            position += 1
        }
    }

    /// Steps over the opening bracket of an array or object, refusing one nested deeper than
    /// `maxDepth`; true when `closing` follows at once (`[]`, `{}`), and then steps over it too.
    private mutating func enterContainer(depth: Int, closing: UInt8) throws(JSONParseError) -> Bool {
        guard depth <= maxDepth else { throw JSONParseError(.tooDeep, at: position) }
        position += 1
        skipWhitespace()
        guard peek() == closing else { return false }
        position += 1
        return true
    }

    private mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
        if try enterContainer(depth: depth, closing: UInt8(ascii: "]")) { return .array([]) }
        // Elements share one path; no declared path runs through an array, so mark it.
        diversion?.pointee.path.append("[]")
        defer { diversion?.pointee.path.removeLast() }
        var elements: [JSONValue] = []
        while true {
            skipWhitespace()
            elements.append(try parseValue(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): position += 1; return .array(elements)
            default: throw fail(.unexpectedCharacter)
            }
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
        if try enterContainer(depth: depth, closing: UInt8(ascii: "}")) { return .object([:]) }
        var members: [String: JSONValue] = [:]
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw fail(.unexpectedCharacter) }
            let keyOffset = position
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw fail(.unexpectedCharacter) }
            position += 1
            skipWhitespace()
            if let diversion, try divertIfDeclared(key, keyOffset: keyOffset, members: members, diversion) {
                // Diverted: handed over raw, left out of `members`.
            } else {
                diversion?.pointee.path.append(key)
                let value = try parseValue(depth: depth)
                diversion?.pointee.path.removeLast()
                guard members.updateValue(value, forKey: key) == nil,
                      diversion.map({ !$0.pointee.divertedPaths.contains($0.pointee.dottedPath(key)) }) ?? true else {
                    throw JSONParseError(.duplicateKey, at: keyOffset)
                }
            }
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"): position += 1; return .object(members)
            default: throw fail(.unexpectedCharacter)
            }
        }
    }

    private mutating func parseNumber() throws(JSONParseError) -> JSONValue {
        let start = position
        var isInteger = true
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw fail(.invalidNumber) }
        if first == UInt8(ascii: "0") {
            position += 1
            if let next = peek(), isDigit(next) { throw fail(.invalidNumber) }
        } else {
            while let next = peek(), isDigit(next) { position += 1 }
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let next = peek(), isDigit(next) else { throw fail(.invalidNumber) }
            while let next = peek(), isDigit(next) { position += 1 }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let next = peek(), isDigit(next) else { throw fail(.invalidNumber) }
            while let next = peek(), isDigit(next) { position += 1 }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw JSONParseError(.invalidNumber, at: start) }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private mutating func parseString() throws(JSONParseError) -> String {
        position += 1  // opening quote
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek() else { throw fail(.unexpectedEnd) }
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                position += 1
                try parseEscape(into: &utf8)
            case 0x00..<0x20:
                throw fail(.controlCharacter)
            case 0x20..<0x80:
                utf8.append(byte)
                position += 1
            default:
                try copyMultibyteScalar(into: &utf8)
            }
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
        guard let byte = peek() else { throw fail(.unexpectedEnd) }
        position += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(0x22)
        case UInt8(ascii: "\\"): utf8.append(0x5C)
        case UInt8(ascii: "/"): utf8.append(0x2F)
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = position - 2
            let unit = try parseHex4()
            var scalarValue = UInt32(unit)
            if (0xD800...0xDBFF).contains(unit) {
                guard peek() == UInt8(ascii: "\\") else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                position += 1
                guard peek() == UInt8(ascii: "u") else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                position += 1
                let low = try parseHex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(unit) {
                throw JSONParseError(.loneSurrogate, at: escapeStart)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else { throw JSONParseError(.loneSurrogate, at: escapeStart) }
            utf8.append(contentsOf: UTF8.encode(scalar)!)
        default:
            position -= 1
            throw fail(.invalidEscape)
        }
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt16 {
        // Reads through a local index and a non-mutating helper: the mutating loop that called
        // peek() and fail() crashed swift-frontend 6.3.1 at -O (SIL verifier, OwnershipModelEliminator).
        let (value, end) = Self.hex4(bytes, from: position)
        position = end
        guard let value else { throw JSONParseError(end >= bytes.count ? .unexpectedEnd : .invalidEscape, at: end) }
        return value
    }

    /// The value of four hex digits at `start`, or nil and the index of the first bad byte.
    static func hex4(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (UInt16?, Int) {
        var value: UInt16 = 0
        var index = start
        while index < start + 4 {
            guard index < bytes.count else { return (nil, index) }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return (nil, index)
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return (value, index)
    }

    /// Validates one multi-byte UTF-8 sequence (no overlong forms, no surrogates, at most
    /// U+10FFFF) and copies it.
    private mutating func copyMultibyteScalar(into utf8: inout [UInt8]) throws(JSONParseError) {
        let lead = bytes[position]
        let length: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F
        case 0xF0: length = 4; lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F
        default: throw JSONParseError(.invalidUTF8, at: position)
        }
        guard position + length <= bytes.count else { throw JSONParseError(.invalidUTF8, at: position) }
        let second = bytes[position + 1]
        guard second >= lowerBound && second <= upperBound else { throw JSONParseError(.invalidUTF8, at: position) }
        for index in 2..<max(2, length) where bytes[position + index] & 0xC0 != 0x80 {
            throw JSONParseError(.invalidUTF8, at: position)
        }
        for index in 0..<length { utf8.append(bytes[position + index]) }
        position += length
    }
}
