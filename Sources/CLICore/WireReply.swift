import BoundedJSON
import VaultAPI

/// Reading a reply frame with VaultAPI's typed replies, as the lean CLI needs it.
public enum WireReply {
    /// Decodes a reply frame of `method` with VaultAPI's typed reply (secret members go straight
    /// from the frame into `SecureBytes`); an error reply throws the interface's ``WireFailure``
    /// through `errors`, a reply of the wrong shape "the daemon sent a malformed … reply".
    public static func decode<M: VarlinkMethod>(_ method: M.Type, _ frame: WipedBuffer,
                                                errors: (String, [String: JSONValue]) -> WireFailure) throws(WireFailure) -> M.Reply {
        let decoded: VarlinkWire.Reply<M.Reply>
        do {
            decoded = try frame.withUnsafeBytes { raw throws(WireReplyError) in try VarlinkWire.decodeReply(M.self, frame: raw) }
        } catch {
            throw .malformed(String(M.member))
        }
        switch decoded {
        case .reply(let reply, _): return reply
        case .error(let name, let parameters): throw errors(name, parameters)
        }
    }
}
