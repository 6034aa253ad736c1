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
            let prefix = "parameters."
            parsed = try? JSONValue.parse(frame, maxDepth: maxDepth, divertingStringsAt: Set(secrets.paths.map { prefix + $0 })) { path, raw in
                let name = String(path.dropFirst(prefix.count))
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
        var flags: [Bool] = []
        for key in ["oneway", "more", "upgrade"] {
            switch message[key] {
            case nil, .null?: flags.append(false)
            case .bool(let flag)?: flags.append(flag)
            default: return .failure(.invalidMessage)
            }
        }
        return .success(VarlinkCall(method: method, parameters: parameters, secrets: decoded, oneway: flags[0], more: flags[1],
                                    upgrade: flags[2]))
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
