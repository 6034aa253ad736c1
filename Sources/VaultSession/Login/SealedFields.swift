import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A tiny tag-length-value format for records that hold secrets: written straight into secure
/// memory, read with every length checked against what is left. Unknown tags are skipped, so a later
/// version can add fields that an older build ignores.
///
/// Layout: 4-byte magic, then fields `tag(1) ‖ length(4, big-endian) ‖ bytes`.
struct SealedFieldsWriter {
    private enum Value {
        case secret(SecureBytes)
        case plain([UInt8])
    }
    private var fields: [(UInt8, Value)] = []
    private let magic: [UInt8]

    init(magic: [UInt8]) {
        precondition(magic.count == 4)
        self.magic = magic
    }

    mutating func secret(_ tag: UInt8, _ value: SecureBytes?) {
        if let value { fields.append((tag, .secret(value))) }
    }

    mutating func text(_ tag: UInt8, _ value: String?) {
        if let value { fields.append((tag, .plain(Array(value.utf8)))) }
    }

    mutating func bytes(_ tag: UInt8, _ value: [UInt8]) {
        fields.append((tag, .plain(value)))
    }

    mutating func date(_ tag: UInt8, _ value: Date?) {
        guard let value else { return }
        let bits = value.timeIntervalSince1970.bitPattern.bigEndian
        fields.append((tag, .plain(withUnsafeBytes(of: bits) { Array($0) })))
    }

    /// The encoded record, in secure memory.
    func finish() -> SecureBytes {
        let total = magic.count + fields.reduce(0) { total, field in
            switch field.1 {
            case .secret(let bytes): return total + 5 + bytes.count
            case .plain(let bytes): return total + 5 + bytes.count
            }
        }
        return SecureBytes(count: total) { out in
            var offset = 0
            func put(_ source: UnsafeRawBufferPointer) {
                guard source.count > 0 else { return }
                (out.baseAddress! + offset).copyMemory(from: source.baseAddress!, byteCount: source.count)
                offset += source.count
            }
            magic.withUnsafeBytes(put)
            for (tag, value) in fields {
                let length: Int
                switch value {
                case .secret(let bytes): length = bytes.count
                case .plain(let bytes): length = bytes.count
                }
                let header: [UInt8] = [tag, UInt8(truncatingIfNeeded: length >> 24), UInt8(truncatingIfNeeded: length >> 16),
                                       UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
                header.withUnsafeBytes(put)
                switch value {
                case .secret(let bytes): bytes.withUnsafeBytes(put)
                case .plain(let bytes): bytes.withUnsafeBytes(put)
                }
            }
        }
    }
}

/// Reads what ``SealedFieldsWriter`` wrote. Secret fields are copied into fresh secure memory.
struct SealedFieldsReader {
    private var ranges: [UInt8: Range<Int>] = [:]
    private let record: SecureBytes

    init(_ record: SecureBytes, magic: [UInt8], what: String) throws {
        self.record = record
        ranges = try record.withUnsafeBytes { raw -> [UInt8: Range<Int>] in
            guard raw.count >= 4, Array(raw[0..<4]) == magic else {
                throw VaultError(.unsupportedFormat, "a stored \(what) has a format this build does not know; update sortedvault")
            }
            var found: [UInt8: Range<Int>] = [:]
            var offset = 4
            while offset < raw.count {
                guard raw.count - offset >= 5 else { throw Self.damaged(what) }
                let tag = raw[offset]
                let length = Int(raw[offset + 1]) << 24 | Int(raw[offset + 2]) << 16 | Int(raw[offset + 3]) << 8 | Int(raw[offset + 4])
                offset += 5
                guard length <= raw.count - offset else { throw Self.damaged(what) }
                found[tag] = offset..<(offset + length)
                offset += length
            }
            return found
        }
    }

    static func damaged(_ what: String) -> VaultError {
        VaultError.integrityFailure("a stored \(what) is malformed; sign in again")
    }

    func has(_ tag: UInt8) -> Bool { ranges[tag] != nil }

    func secret(_ tag: UInt8) -> SecureBytes? {
        guard let range = ranges[tag] else { return nil }
        return record.withUnsafeBytes { SecureBytes(copying: UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    func bytes(_ tag: UInt8) -> [UInt8]? {
        guard let range = ranges[tag] else { return nil }
        return record.withUnsafeBytes { Array($0[range]) }
    }

    func text(_ tag: UInt8) -> String? {
        bytes(tag).map { String(decoding: $0, as: UTF8.self) }
    }

    func date(_ tag: UInt8) -> Date? {
        guard let bytes = bytes(tag), bytes.count == 8 else { return nil }
        let bits = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let seconds = Double(bitPattern: bits)
        return seconds.isFinite ? Date(timeIntervalSince1970: seconds) : nil
    }
}
