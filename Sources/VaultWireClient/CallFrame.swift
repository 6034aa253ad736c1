import BoundedJSON
import VaultCrypto

/// Writes one varlink call frame, `{"method":"…","parameters":{…}}` and its NUL, into a
/// ``WipedBuffer``: names and options through BoundedJSON's string writer (the daemon's own JSON
/// rules), a secret as base64 straight out of secure memory.
///
/// ```swift
/// var call = CallFrame(method: "org.sortedvault.vault.Store")
/// call.string("service", "github")
/// call.secretBase64("secret", secret)
/// let frame = call.finish()
/// ```
public struct CallFrame {
    private let buffer = WipedBuffer(capacity: 512)
    private var first = true

    public init(method: String) {
        buffer.append(contentsOf: "{\"method\":".utf8)
        appendJSON(.string(method))
        buffer.append(contentsOf: ",\"parameters\":{".utf8)
    }

    public mutating func string(_ name: String, _ value: String) {
        key(name)
        appendJSON(.string(value))
    }

    public mutating func double(_ name: String, _ value: Double) {
        key(name)
        appendJSON(.double(value))
    }

    /// An object of string values, in the order given (names must be distinct).
    public mutating func stringObject(_ name: String, _ pairs: [(String, String)]) {
        key(name)
        buffer.append(UInt8(ascii: "{"))
        for (index, (member, value)) in pairs.enumerated() {
            if index > 0 { buffer.append(UInt8(ascii: ",")) }
            appendJSON(.string(member))
            buffer.append(UInt8(ascii: ":"))
            appendJSON(.string(value))
        }
        buffer.append(UInt8(ascii: "}"))
    }

    /// A secret as a base64 JSON string, encoded straight into the (wiped) frame buffer.
    public mutating func secretBase64(_ name: String, _ secret: SecureBytes) {
        key(name)
        buffer.append(UInt8(ascii: "\""))
        let length = secret.base64Count
        _ = buffer.appendInPlace(upTo: length) { out in
            secret.writeBase64(into: out)
            return length
        }
        buffer.append(UInt8(ascii: "\""))
    }

    /// Closes the frame and hands over its buffer.
    public consuming func finish() -> WipedBuffer {
        buffer.append(contentsOf: "}}".utf8)
        buffer.append(0)
        return buffer
    }

    private mutating func key(_ name: String) {
        if !first { buffer.append(UInt8(ascii: ",")) }
        first = false
        appendJSON(.string(name))
        buffer.append(UInt8(ascii: ":"))
    }

    private func appendJSON(_ value: JSONValue) {
        var bytes: [UInt8] = []
        value.write(into: &bytes)
        buffer.append(contentsOf: bytes)
    }
}
