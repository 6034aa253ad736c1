/// Decoding calls and encoding replies: the varlink message layer above the NUL framing.
/// `@_spi(Benchmarks)` only so the micro-benchmarks under `Benchmarks/` can time it.
@_spi(Benchmarks) public enum VarlinkMessage {
    /// Decodes one call frame. A `VarlinkError` result is a broken message (not JSON, not an
    /// object, no string `method`, ill-typed fields): the connection is answered and closed.
    ///
    /// String members at `secrets.paths` (below `parameters`) never become a `String`: their raw
    /// bytes go to `secrets.decode` and the results to ``VarlinkCall/secrets``.
    public static func decodeCall(_ frame: UnsafeRawBufferPointer, maxDepth: Int,
                                  secrets: VarlinkSecretParameters? = nil) -> Result<VarlinkCall, VarlinkError> {
        var decoded: [String: any Sendable] = [:]
        let parsed: JSONValue?
        if let secrets, !secrets.paths.isEmpty {
            parsed = try? JSONValue.parse(frame, maxDepth: maxDepth, diverting: secrets.messagePaths) { path, raw in
                let name = String(path.dropFirst(VarlinkSecretParameters.prefix.count))
                decoded[name] = secrets.decode(name, raw)
            }
        } else {
            parsed = try? JSONValue.parse(frame, maxDepth: maxDepth)
        }
        guard case .object(let message)? = parsed,
              case .string(let method)? = message["method"], !method.isEmpty
        else { return .failure(.invalidMessage) }
        var parameters: [String: JSONValue] = [:]
        switch message["parameters"] {
        case nil, .null?: break
        case .object(let object)?: parameters = object
        default: return .failure(.invalidMessage)
        }
        guard let oneway = flag(message["oneway"]), let more = flag(message["more"]), let upgrade = flag(message["upgrade"]) else {
            return .failure(.invalidMessage)
        }
        return .success(VarlinkCall(method: method, parameters: parameters, secrets: decoded, oneway: oneway, more: more,
                                    upgrade: upgrade))
    }

    /// A call's flag: absent or null is false; anything but a boolean is nil (an invalid message).
    private static func flag(_ value: JSONValue?) -> Bool? {
        switch value {
        case nil, .null?: false
        case .bool(let flag)?: flag
        default: nil
        }
    }

    /// The bytes of a reply frame, NUL included.
    public static func encodeReply(_ parameters: [String: JSONValue], continues: Bool = false) -> [UInt8] {
        var message: [String: JSONValue] = ["parameters": .object(parameters)]
        if continues { message["continues"] = .bool(true) }
        return frame(message)
    }

    /// The bytes of an error reply frame, NUL included.
    public static func encodeError(_ error: VarlinkError) -> [UInt8] {
        frame(["error": .string(error.name), "parameters": .object(error.parameters)])
    }

    /// The bytes of a call frame, NUL included.
    public static func encodeCall(_ method: String, _ parameters: [String: JSONValue], more: Bool = false, oneway: Bool = false) -> [UInt8] {
        var message: [String: JSONValue] = ["method": .string(method), "parameters": .object(parameters)]
        if more { message["more"] = .bool(true) }
        if oneway { message["oneway"] = .bool(true) }
        return frame(message)
    }

    private static func frame(_ message: [String: JSONValue]) -> [UInt8] {
        var bytes = JSONValue.object(message).serialized()
        bytes.append(0)
        return bytes
    }
}
