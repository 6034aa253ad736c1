import BoundedJSON

/// One member of a JSON object, by byte offsets: the key's opening quote and the value's bytes
/// (a string's quotes included).
struct JSONMemberSpan {
    let key: [UInt8]
    let keyStart: Int
    let value: Range<Int>

    var isString: Bool { value.count >= 2 }
    /// A string value's bytes between its quotes, escapes unresolved.
    var stringContent: Range<Int> { (value.lowerBound + 1)..<(value.upperBound - 1) }
}

/// An object's braces and members, by byte offsets.
struct JSONObjectSpan {
    let open: Int
    let close: Int
    let members: [JSONMemberSpan]

    func member(_ name: String) -> JSONMemberSpan? {
        members.first { $0.key.elementsEqual(name.utf8) }
    }
}

/// Where the objects and members of a JSON document lie, so one member can be cut out and every
/// other byte kept. BoundedJSON decides whether the document is valid (``DockerConfigFile`` runs
/// both); this only walks its structure, bounded in depth, and never decodes a value.
struct JSONSpans {
    let bytes: UnsafeRawBufferPointer
    let maximumDepth: Int

    func skipWhitespace(_ index: Int) -> Int {
        var index = index
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
        return index
    }

    func fail(_ offset: Int) -> JSONParseError { JSONParseError(.unexpectedCharacter, at: offset) }

    /// The object starting at `index` (its `{`).
    func object(at index: Int, depth: Int = 0) throws(JSONParseError) -> JSONObjectSpan {
        guard depth < maximumDepth else { throw JSONParseError(.tooDeep, at: index) }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { throw fail(index) }
        var members: [JSONMemberSpan] = []
        var position = skipWhitespace(index + 1)
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            return JSONObjectSpan(open: index, close: position, members: [])
        }
        while true {
            let keyStart = position
            let keyEnd = try stringEnd(at: keyStart)
            let raw = UnsafeRawBufferPointer(rebasing: bytes[(keyStart + 1)..<(keyEnd - 1)])
            var key = [UInt8](repeating: 0, count: try JSONValue.unescape(raw, into: nil))
            var failure: JSONParseError?
            key.withUnsafeMutableBytes { out in
                do throws(JSONParseError) { try JSONValue.unescape(raw, into: out) } catch { failure = error }
            }
            if let failure { throw failure }
            position = skipWhitespace(keyEnd)
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else { throw fail(position) }
            let valueStart = skipWhitespace(position + 1)
            let valueEnd = try self.valueEnd(at: valueStart, depth: depth + 1)
            members.append(JSONMemberSpan(key: key, keyStart: keyStart, value: valueStart..<valueEnd))
            position = skipWhitespace(valueEnd)
            guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
            if bytes[position] == UInt8(ascii: "}") { return JSONObjectSpan(open: index, close: position, members: members) }
            guard bytes[position] == UInt8(ascii: ",") else { throw fail(position) }
            position = skipWhitespace(position + 1)
        }
    }

    /// The offset just past the value starting at `index`.
    func valueEnd(at index: Int, depth: Int) throws(JSONParseError) -> Int {
        guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return try stringEnd(at: index)
        case UInt8(ascii: "{"):
            return try object(at: index, depth: depth).close + 1
        case UInt8(ascii: "["):
            guard depth < maximumDepth else { throw JSONParseError(.tooDeep, at: index) }
            var position = skipWhitespace(index + 1)
            if position < bytes.count, bytes[position] == UInt8(ascii: "]") { return position + 1 }
            while true {
                position = skipWhitespace(try valueEnd(at: position, depth: depth + 1))
                guard position < bytes.count else { throw JSONParseError(.unexpectedEnd, at: position) }
                if bytes[position] == UInt8(ascii: "]") { return position + 1 }
                guard bytes[position] == UInt8(ascii: ",") else { throw fail(position) }
                position = skipWhitespace(position + 1)
            }
        default:
            // A number or literal: BoundedJSON checks its spelling; here it only has to end.
            var position = index
            while position < bytes.count, !",}] \t\r\n".utf8.contains(bytes[position]) { position += 1 }
            guard position > index else { throw fail(index) }
            return position
        }
    }

    /// The offset just past the string whose opening quote is at `index`.
    func stringEnd(at index: Int) throws(JSONParseError) -> Int {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw fail(index) }
        var position = index + 1
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "\""): return position + 1
            case UInt8(ascii: "\\"): position += 2
            default: position += 1
            }
        }
        throw JSONParseError(.unexpectedEnd, at: bytes.count)
    }

    /// The byte ranges that remove the members at `indices` from `object` and leave valid JSON with
    /// every other byte as it was: a run of members followed by a kept one goes up to that one's key;
    /// a run at the end goes from the previous kept value's end; all members gone leaves `{}`.
    static func removal(of indices: Set<Int>, from object: JSONObjectSpan) -> [Range<Int>] {
        guard !indices.isEmpty else { return [] }
        if indices.count == object.members.count { return [(object.open + 1)..<object.close] }
        var ranges: [Range<Int>] = []
        var index = 0
        let members = object.members
        while index < members.count {
            guard indices.contains(index) else { index += 1; continue }
            var last = index
            while last + 1 < members.count && indices.contains(last + 1) { last += 1 }
            if last + 1 < members.count {
                ranges.append(members[index].keyStart..<members[last + 1].keyStart)
            } else {
                ranges.append(members[index - 1].value.upperBound..<members[last].value.upperBound)
            }
            index = last + 1
        }
        return ranges
    }
}
