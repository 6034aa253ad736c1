import BoundedJSON
import VaultCrypto

/// Writes one JSON document into memory it owns and wipes: grown by copy-then-zero, never by a
/// reallocation that would free secret bytes unwiped. Secrets are base64-encoded straight out of
/// `SecureBytes` into that memory.
///
/// ```swift
/// var writer = WireWriter()
/// writer.beginObject()
/// writer.field("service", "github")
/// writer.secretField("secret", secret)
/// writer.endObject()
/// let bytes = writer.finish()   // WireBytes, zeroed when released
/// ```
///
/// Object members are written in call order; keys are plain names written as given (escaped).
public struct WireWriter: ~Copyable {
    private var storage: UnsafeMutableRawBufferPointer
    private var count = 0
    /// One entry per open object or array: whether it has a member yet (for the commas).
    private var hasMember: [Bool] = []

    public init(capacity: Int = 256) {
        storage = .allocate(byteCount: max(capacity, 16), alignment: 1)
    }

    deinit {
        wipeMemory(storage.baseAddress!, storage.count)
        storage.deallocate()
    }

    /// Hands the bytes over (the writer's memory moves into the result, no copy).
    public consuming func finish() -> WireBytes {
        let result = WireBytes(taking: storage, count: count)
        storage = .allocate(byteCount: 16, alignment: 1)
        count = 0
        return result
    }

    // MARK: Structure

    public mutating func beginObject() { beforeValue(); append(UInt8(ascii: "{")); hasMember.append(false) }
    public mutating func endObject() { hasMember.removeLast(); append(UInt8(ascii: "}")) }
    public mutating func beginArray() { beforeValue(); append(UInt8(ascii: "[")); hasMember.append(false) }
    public mutating func endArray() { hasMember.removeLast(); append(UInt8(ascii: "]")) }

    /// Starts a member of the open object; write its value next.
    public mutating func key(_ name: String) {
        if hasMember.last == true { append(UInt8(ascii: ",")) }
        if !hasMember.isEmpty { hasMember[hasMember.count - 1] = true }
        writeString(name)
        append(UInt8(ascii: ":"))
        pendingKey = true
    }

    private var pendingKey = false

    /// Commas between array elements; nothing after a key.
    private mutating func beforeValue() {
        if pendingKey {
            pendingKey = false
            return
        }
        if hasMember.last == true { append(UInt8(ascii: ",")) }
        if !hasMember.isEmpty { hasMember[hasMember.count - 1] = true }
    }

    // MARK: Values

    public mutating func string(_ value: String) { beforeValue(); writeString(value) }
    public mutating func bool(_ value: Bool) { beforeValue(); appendASCII(value ? "true" : "false") }
    public mutating func null() { beforeValue(); appendASCII("null") }
    public mutating func int(_ value: Int64) { beforeValue(); appendASCII(String(value)) }

    /// A float; an integral value keeps a fraction (`1.0`) so that a peer decodes it as a float.
    /// Non-finite values, which JSON cannot express, are written as `null`.
    public mutating func double(_ value: Double) {
        beforeValue()
        guard value.isFinite else { return appendASCII("null") }
        appendASCII(value.description)
    }

    /// Any non-secret JSON value (a provider's token response, attributes).
    public mutating func json(_ value: JSONValue) {
        beforeValue()
        let bytes = value.serialized()
        append(contentsOf: bytes)
    }

    /// A secret as standard padded base64, written from secure memory into this writer's memory.
    public mutating func secret(_ value: SecureBytes) {
        beforeValue()
        append(UInt8(ascii: "\""))
        reserve(value.base64Capacity)
        let written = value.encodeBase64(into: UnsafeMutableRawBufferPointer(rebasing: storage[count...]))
        count += written
        // libsodium's NUL after the text is overwritten by the next byte, or wiped with the rest.
        append(UInt8(ascii: "\""))
    }

    /// A secret as the JSON string of its bytes (a provider's token inside its own JSON answer),
    /// escaped straight from secure memory into this writer's memory. The reader takes it back with
    /// ``SecretField/decodeText(_:maxBytes:)``.
    public mutating func secretText(_ value: SecureBytes) {
        beforeValue()
        value.withUnsafeBytes { writeQuoted($0.assumingMemoryBound(to: UInt8.self)) }
    }

    /// The NUL that ends a varlink frame.
    public mutating func nul() { append(0) }

    /// The newline that ends a JSON line (a backup's, ``BackupDocument``), after a whole value.
    public mutating func newline() { append(0x0A) }

    // MARK: Members

    public mutating func field(_ name: String, _ value: String) { key(name); string(value) }
    public mutating func field(_ name: String, _ value: Bool) { key(name); bool(value) }
    public mutating func field(_ name: String, _ value: Int64) { key(name); int(value) }
    public mutating func field(_ name: String, _ value: Double) { key(name); double(value) }
    public mutating func field(_ name: String, _ value: [String]) {
        key(name)
        beginArray()
        for element in value { string(element) }
        endArray()
    }
    public mutating func field(_ name: String, _ value: [String: String]) {
        key(name)
        beginObject()
        for (member, text) in value.sorted(by: { $0.key < $1.key }) { field(member, text) }
        endObject()
    }
    public mutating func secretField(_ name: String, _ value: SecureBytes) { key(name); secret(value) }

    /// Optional members are left out when nil (the interfaces declare them `?`).
    public mutating func field(_ name: String, _ value: String?) { if let value { field(name, value) } }
    public mutating func field(_ name: String, _ value: Double?) { if let value { field(name, value) } }
    public mutating func field(_ name: String, _ value: Int64?) { if let value { field(name, value) } }
    public mutating func secretField(_ name: String, _ value: SecureBytes?) { if let value { secretField(name, value) } }

    // MARK: Bytes

    private mutating func appendASCII(_ text: String) {
        var text = text
        text.withUTF8 { append(contentsOf: $0) }
    }

    private mutating func writeString(_ value: String) {
        var value = value
        value.withUTF8 { writeQuoted($0) }
    }

    /// `bytes` as a JSON string: quoted, with quote, backslash and control bytes escaped.
    private mutating func writeQuoted(_ bytes: UnsafeBufferPointer<UInt8>) {
        append(UInt8(ascii: "\""))
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 || byte == 0x7F else { continue }
            append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            appendEscaped(byte)
            runStart = index + 1
        }
        append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func appendEscaped(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): appendASCII(#"\""#)
        case UInt8(ascii: "\\"): appendASCII(#"\\"#)
        case 0x0A: appendASCII(#"\n"#)
        case 0x0D: appendASCII(#"\r"#)
        case 0x09: appendASCII(#"\t"#)
        default:
            appendASCII(#"\u00"#)
            append(Self.hexDigits[Int(byte >> 4)])
            append(Self.hexDigits[Int(byte & 0xF)])
        }
    }

    private mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    private mutating func append(contentsOf bytes: some Collection<UInt8>) {
        reserve(bytes.count)
        let copied: Void? = bytes.withContiguousStorageIfAvailable { source in
            if let base = source.baseAddress, source.count > 0 {
                (storage.baseAddress! + count).copyMemory(from: base, byteCount: source.count)
            }
            count += source.count
        }
        if copied == nil {
            for byte in bytes {
                storage[count] = byte
                count += 1
            }
        }
    }

    /// Makes room for `extra` more bytes: a bigger block, the bytes copied over, the old one zeroed.
    private mutating func reserve(_ extra: Int) {
        guard count + extra > storage.count else { return }
        var capacity = storage.count * 2
        while capacity < count + extra { capacity *= 2 }
        let grown = UnsafeMutableRawBufferPointer.allocate(byteCount: capacity, alignment: 1)
        grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: count)
        wipeMemory(storage.baseAddress!, storage.count)
        storage.deallocate()
        storage = grown
    }
}
