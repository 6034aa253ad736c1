import BoundedJSON

/// Whole varlink messages for typed methods: a call out and its reply in (the client), a call in
/// and its reply out (tests, benchmarks; the daemon's server gets calls through its `Varlink`
/// module). Frames end with a NUL.
public enum VarlinkWire {
    /// The call frame `{"method":"…","parameters":{…}}` + NUL, in memory that is wiped when released.
    public static func encodeCall<M: VarlinkMethod>(_ method: M.Type, _ request: M.Request, more: Bool = false,
                                                    oneway: Bool = false) -> WireBytes {
        var writer = WireWriter()
        writer.beginObject()
        writer.field("method", M.name)
        writer.key("parameters")
        writer.beginObject()
        request.encodeMembers(to: &writer)
        writer.endObject()
        if more { writer.field("more", true) }
        if oneway { writer.field("oneway", true) }
        writer.endObject()
        writer.nul()
        return writer.finish()
    }

    /// Only the `parameters` object of a reply, for a server that frames it itself.
    public static func encodeParameters(_ reply: some WireEncodable) -> WireBytes {
        var writer = WireWriter()
        writer.beginObject()
        reply.encodeMembers(to: &writer)
        writer.endObject()
        return writer.finish()
    }

    /// The reply frame `{"parameters":{…}}` + NUL.
    public static func encodeReply(_ reply: some WireEncodable, continues: Bool = false) -> WireBytes {
        var writer = WireWriter()
        writer.beginObject()
        writer.key("parameters")
        writer.beginObject()
        reply.encodeMembers(to: &writer)
        writer.endObject()
        if continues { writer.field("continues", true) }
        writer.endObject()
        writer.nul()
        return writer.finish()
    }

    /// What a reply frame said: the typed reply, or the error the peer answered with — its fully
    /// qualified name and its parameters (never secrets: the interfaces' errors carry names and
    /// reasons only), for the client's error reading (`ErrorReply`).
    public enum Reply<Value: Sendable>: Sendable {
        case reply(Value, continues: Bool)
        case error(name: String, parameters: [String: JSONValue])
    }

    /// Decodes one reply frame (without its NUL). Secret members of `M.Reply` go from the frame's
    /// base64 straight into secure memory; the caller wipes the frame.
    public static func decodeReply<M: VarlinkMethod>(_ method: M.Type, frame: UnsafeRawBufferPointer,
                                                     maxDepth: Int = 64) throws(WireReplyError) -> Reply<M.Reply> {
        let (message, secrets) = try parse(frame, maxDepth: maxDepth, secrets: M.replySecrets)
        let parameters: [String: JSONValue]
        switch message["parameters"] {
        case nil, .null?: parameters = [:]
        case .object(let object)?: parameters = object
        default: throw WireReplyError("reply parameters that are not an object")
        }
        if let name = message["error"] {
            guard let name = name.stringValue else { throw WireReplyError("an error name that is not a string") }
            return .error(name: name, parameters: parameters)
        }
        do {
            let reply = try M.Reply(from: WireParameters(parameters, secrets: secrets))
            return .reply(reply, continues: message["continues"]?.boolValue ?? false)
        } catch {
            throw WireReplyError("\(M.member): \(error.reason)")
        }
    }

    /// Decodes a call frame of `M` (without its NUL): its request, or why not.
    public static func decodeCall<M: VarlinkMethod>(_ method: M.Type, frame: UnsafeRawBufferPointer,
                                                    maxDepth: Int = 64) throws -> M.Request {
        let (message, secrets) = try parse(frame, maxDepth: maxDepth, secrets: M.requestSecrets)
        guard message["method"]?.stringValue == M.name else { throw WireReplyError("a call of another method") }
        let parameters = message["parameters"]?.objectValue ?? [:]
        return try M.Request(from: WireParameters(parameters, secrets: secrets))
    }

    /// Parses a message, diverting the declared secret members into ``SecretField``s.
    public static func parse(_ frame: UnsafeRawBufferPointer, maxDepth: Int, secrets limits: SecretLimits)
        throws(WireReplyError) -> (message: [String: JSONValue], secrets: [String: SecretField]) {
        var secrets: [String: SecretField] = [:]
        let value: JSONValue
        do {
            value = try JSONValue.parse(frame, maxDepth: maxDepth, divertingStringsAt: limits.messagePaths) { path, raw in
                let name = String(path.dropFirst("parameters.".count))
                secrets[name] = limits.decode(name, raw)
            }
        } catch {
            throw WireReplyError("not a JSON message (\(error.reason.rawValue) at byte \(error.offset))")
        }
        guard let message = value.objectValue else { throw WireReplyError("a message that is not a JSON object") }
        return (message, secrets)
    }
}

extension VarlinkWire {
    /// The members `value` writes, as a `JSONValue` object: for printing replies without secrets
    /// (`--json` output) and for tests that build raw messages. A secret member becomes an ordinary
    /// base64 `String` here, so do not use it on values that hold one outside tests.
    public static func jsonObject(_ value: some WireEncodable) -> [String: JSONValue] {
        encodeParameters(value).withUnsafeBytes { (try? JSONValue.parse($0))?.objectValue ?? [:] }
    }
}
