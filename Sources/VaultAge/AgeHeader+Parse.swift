extension AgeHeader {
    /// Parses the header at the start of `file`, strictly and within ``Limits``.
    ///
    /// Throws ``AgeError/Code/unsupportedVersion`` for an age file of another version, and
    /// ``AgeError/Code/malformedHeader`` naming the line for anything off the v1 grammar: a CR, a
    /// missing LF, an argument that is empty or not printable ASCII, non-canonical or padded
    /// base64, a body line longer than 64 columns, a MAC that is not 32 bytes, or an scrypt stanza
    /// beside any other.
    static func parse(_ file: UnsafeRawBufferPointer) throws -> AgeHeader {
        var reader = LineReader(file: file)
        guard let version = reader.nextLine(maximumLength: 256) else {
            throw file.isEmpty ? AgeError.header("the file is empty") : AgeError.header("line 1 has no end within 256 bytes")
        }
        if !version.elementsEqual(versionLine) {
            let rest = version.dropFirst(versionPrefix.count)
            if version.starts(with: versionPrefix), !rest.isEmpty, rest.allSatisfy({ (33...126).contains($0) }) {
                let shown = String(decoding: version.prefix(64), as: UTF8.self)
                throw AgeError(.unsupportedVersion, "unsupported age version \"\(shown)\"; this reads age-encryption.org/v1")
            }
            throw AgeError.header("line 1 is not \"age-encryption.org/v1\"")
        }
        var stanzas: [AgeStanza] = []
        while true {
            guard reader.offset <= Limits.maximumHeaderLength else {
                throw AgeError.header("the header is longer than \(Limits.maximumHeaderLength) bytes")
            }
            let lineNumber = reader.lineNumber + 1
            guard let line = reader.nextLine(maximumLength: Limits.maximumArgumentLineLength) else {
                if reader.remaining > Limits.maximumArgumentLineLength {
                    throw AgeError.header("line \(lineNumber) is longer than \(Limits.maximumArgumentLineLength) bytes")
                }
                throw AgeError.header("line \(lineNumber) ends before its LF (a header needs a final \"--- MAC\" line)")
            }
            if line.starts(with: macPrefix) {
                let macStart = reader.offset - line.count - 1
                guard !stanzas.isEmpty else {
                    throw AgeError.header("line \(lineNumber): the MAC line comes before any recipient stanza")
                }
                guard line.count > 4, line[line.startIndex + 3] == 0x20,
                      let mac = AgeBase64.decode(line.dropFirst(4)), mac.count == 32 else {
                    throw AgeError.header("line \(lineNumber) is not \"--- \" and a canonical base64 32-byte MAC")
                }
                // The spec: an scrypt stanza must be alone, so a passphrase file cannot also be
                // opened (and so have been written) by someone holding another key.
                if stanzas.contains(where: { $0.type == "scrypt" }), stanzas.count > 1 {
                    throw AgeError.header("an scrypt stanza must be the only stanza, and this header has \(stanzas.count)")
                }
                let macInput = Array(file[0..<(macStart + 3)])
                return AgeHeader(stanzas: stanzas, mac: mac, macInput: macInput, payloadOffset: reader.offset)
            }
            guard stanzas.count < Limits.maximumStanzas else {
                throw AgeError.header("more than \(Limits.maximumStanzas) recipient stanzas")
            }
            stanzas.append(try parseStanza(opening: line, lineNumber: lineNumber, reader: &reader))
        }
    }

    private static func parseStanza(opening line: Slice<UnsafeRawBufferPointer>, lineNumber: Int,
                                    reader: inout LineReader) throws -> AgeStanza {
        guard line.starts(with: Array("-> ".utf8)) else {
            throw AgeError.header("line \(lineNumber) starts neither a stanza (\"-> \") nor the MAC (\"--- \")")
        }
        let arguments = line.dropFirst(3).split(separator: 0x20, omittingEmptySubsequences: false)
        guard arguments.allSatisfy({ !$0.isEmpty && $0.allSatisfy { (33...126).contains($0) } }) else {
            throw AgeError.header("line \(lineNumber): a stanza argument is empty or not printable ASCII")
        }
        var body: [UInt8] = []
        while true {
            let bodyLineNumber = reader.lineNumber + 1
            guard let bodyLine = reader.nextLine(maximumLength: 64) else {
                throw AgeError.header("line \(bodyLineNumber): a stanza body line is longer than 64 columns or has no LF")
            }
            guard let decoded = AgeBase64.decode(bodyLine) else {
                let hint = bodyLine.starts(with: Array("-".utf8)) ? " (the stanza ended without a short line)" : ""
                throw AgeError.header("line \(bodyLineNumber) is not canonical unpadded base64\(hint)")
            }
            body += decoded
            if decoded.count < AgeStanza.bytesPerLine { break }
        }
        let strings = arguments.map { String(decoding: $0, as: UTF8.self) }
        return AgeStanza(type: strings[0], arguments: Array(strings.dropFirst()), body: body)
    }
}

/// Reads LF-terminated lines from the front of a buffer; a line never includes its LF.
struct LineReader {
    let file: UnsafeRawBufferPointer
    private(set) var offset = 0
    private(set) var lineNumber = 0

    init(file: UnsafeRawBufferPointer) { self.file = file }

    var remaining: Int { file.count - offset }

    /// The next line, or nil when no LF comes within `maximumLength` bytes (or before the end).
    mutating func nextLine(maximumLength: Int) -> Slice<UnsafeRawBufferPointer>? {
        let limit = min(file.count, offset + maximumLength + 1)
        guard let end = file[offset..<limit].firstIndex(of: 0x0A) else { return nil }
        let line = file[offset..<end]
        offset = end + 1
        lineNumber += 1
        return line
    }
}
