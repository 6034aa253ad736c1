/// age's ASCII armor: strict PEM (RFC 7468 §3) with the label `AGE ENCRYPTED FILE`, padded
/// canonical base64 in lines of 64 columns, the last one shorter or full.
///
/// Reading follows the reference reader: whitespace is allowed around the block (at most 1 KiB
/// each side) and lines may end in LF or CRLF; anything else is ``AgeError/Code/malformedArmor``:
/// text before or after the block, headers, an empty or over-long line, a short line that is not
/// the last, padding in the middle, non-canonical base64, a missing END line.
enum AgeArmor {
    static let beginLine = Array("-----BEGIN AGE ENCRYPTED FILE-----".utf8)
    static let endLine = Array("-----END AGE ENCRYPTED FILE-----".utf8)
    static let columns = 64
    static let maximumWhitespace = 1024

    static func encode(_ binary: [UInt8]) -> [UInt8] {
        var out = beginLine + [0x0A]
        let text = AgeBase64.encode(binary, padded: true)
        var offset = 0
        while offset < text.count {
            let end = min(offset + columns, text.count)
            out += text[offset..<end] + [0x0A]
            offset = end
        }
        return out + endLine + [0x0A]
    }

    /// Whether `file` starts, after whitespace, with a PEM BEGIN line (of any label: a wrong
    /// label is then reported as bad armor, not as a bad binary header).
    static func looksArmored(_ file: UnsafeRawBufferPointer) -> Bool {
        let start = file.firstIndex { !isSpace($0) } ?? file.endIndex
        return file[start...].starts(with: Array("-----BEGIN".utf8))
    }

    static func decode(_ file: UnsafeRawBufferPointer) throws -> [UInt8] {
        var lines = ArmorLines(file: file)
        var skipped = 0
        while true {
            guard let line = lines.next() else { throw failure("the file ends before the BEGIN line") }
            if line.allSatisfy(isSpace) {
                skipped += line.count + 1
                guard skipped <= maximumWhitespace else { throw failure("more than 1 KiB of whitespace before the BEGIN line") }
                continue
            }
            guard line.elementsEqual(beginLine) else {
                throw failure("the first line is not \"-----BEGIN AGE ENCRYPTED FILE-----\"")
            }
            break
        }
        var binary: [UInt8] = []
        while true {
            let number = lines.number + 1
            guard let line = lines.next() else { throw failure("the file ends before the END line") }
            if line.elementsEqual(endLine) { break }
            guard !line.isEmpty else { throw failure("line \(number) is empty") }
            guard line.count <= columns else { throw failure("line \(number) is longer than 64 columns") }
            guard let decoded = AgeBase64.decodePadded(line) else {
                throw failure("line \(number) is not canonical padded base64")
            }
            binary += decoded
            if decoded.count < columns / 4 * 3 {
                guard let closing = lines.next(), closing.elementsEqual(endLine) else {
                    throw failure("line \(number) is short but not followed by the END line")
                }
                break
            }
        }
        let rest = file[lines.offset...]
        guard rest.allSatisfy(isSpace) else { throw failure("text follows the END line") }
        guard rest.count < maximumWhitespace else { throw failure("more than 1 KiB of whitespace after the END line") }
        return binary
    }

    private static func failure(_ what: String) -> AgeError {
        AgeError(.malformedArmor, "malformed age armor: \(what)")
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }
}

/// Lines of an armored file, each without its LF and one CR before it.
private struct ArmorLines {
    let file: UnsafeRawBufferPointer
    private(set) var offset = 0
    private(set) var number = 0

    init(file: UnsafeRawBufferPointer) { self.file = file }

    /// The next line; nil at the end of the file. A last line without LF counts.
    mutating func next() -> Slice<UnsafeRawBufferPointer>? {
        guard offset < file.count else { return nil }
        let end = file[offset...].firstIndex(of: 0x0A) ?? file.count
        var line = file[offset..<end]
        offset = min(end + 1, file.count)
        number += 1
        if line.last == 0x0D { line = line.dropLast() }
        return line
    }
}
