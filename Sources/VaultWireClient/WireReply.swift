import BoundedJSON
import VaultCrypto

/// One received reply frame, read without VaultAPI's types: either its `parameters` object (found,
/// not parsed, so that a secret in it is decoded only into secure memory) or the error it carries.
/// The frame's bytes stay in the wiped buffer for as long as this value lives.
///
/// Only AutoLogin uses it, while the daemon still sends the access token as JSON text rather than
/// VaultAPI's base64; when the daemon answers with `SessionInterface.LoginOutcome`, AutoLogin moves
/// to ``decode(_:_:errors:)`` like the item calls, and this scanner can go.
public struct WireReply {
    public let frame: WipedBuffer
    /// The range of the `parameters` object of a successful reply (nil on an error reply).
    public let parameters: Range<Int>?

    /// Splits a frame; an error reply throws the interface's ``WireFailure`` through `decodeError`.
    public init(_ frame: WipedBuffer, decodeError: (String, [String: JSONValue]) -> WireFailure) throws(WireFailure) {
        self.frame = frame
        var error: Range<Int>?
        var parameters: Range<Int>?
        let wellFormed = frame.withUnsafeBytes { raw in
            let scanner = JSONScanner(raw)
            return scanner.isWellFormed && scanner.members(ofObjectAt: 0) { key, value in
                let name = UnsafeRawBufferPointer(rebasing: raw[key])
                if name.elementsEqual("error".utf8) { error = value }
                if name.elementsEqual("parameters".utf8) { parameters = value }
            }
        }
        guard wellFormed else { throw WireFailure(.failure, "the daemon broke the protocol: a reply that is not a JSON object") }
        if let error {
            // Error replies carry names and reasons, never secrets: parse them whole.
            let (name, details) = frame.withUnsafeBytes { raw -> (String?, [String: JSONValue]) in
                let scanner = JSONScanner(raw)
                return (scanner.value(error)?.stringValue, parameters.flatMap { scanner.value($0)?.objectValue } ?? [:])
            }
            throw decodeError(name ?? "", details)
        }
        self.parameters = parameters
    }

    /// A member of `parameters` (path of object members), parsed; never use it for a secret field.
    public func value(_ path: String...) -> JSONValue? {
        frame.withUnsafeBytes { raw in
            let scanner = JSONScanner(raw)
            return range(path, scanner).flatMap { scanner.value($0) }
        }
    }

    /// Whether a member of `parameters` is there and not null.
    public func has(_ path: String...) -> Bool {
        frame.withUnsafeBytes { raw in
            let scanner = JSONScanner(raw)
            guard let found = range(path, scanner) else { return false }
            return !UnsafeRawBufferPointer(rebasing: raw[found]).elementsEqual("null".utf8)
        }
    }

    /// A string member of `parameters` whose text is the secret, unescaped into secure memory.
    public func secretText(_ path: String...) -> SecureBytes? {
        frame.withUnsafeBytes { raw in
            let scanner = JSONScanner(raw)
            return range(path, scanner).flatMap { scanner.secretString($0) }
        }
    }

    private func range(_ path: [String], _ scanner: JSONScanner) -> Range<Int>? {
        guard var current = parameters else { return nil }
        for name in path {
            guard let next = scanner.member(name, ofObjectAt: current.lowerBound) else { return nil }
            current = next
        }
        return current
    }
}
