import Varlink
import VaultAPI

/// Where VaultAPI's typed messages meet the `Varlink` server: the one adapter between them, in the
/// daemon, the one program that serves them.

extension WireBytes: VarlinkEncodedParameters {}

extension VarlinkSecretParameters {
    /// Diverts `limits`' paths from every call frame and decodes each, bounded, into a ``SecretField``.
    public static func decoding(_ limits: SecretLimits) -> VarlinkSecretParameters {
        VarlinkSecretParameters(paths: Set(limits.limits.keys)) { path, raw in limits.decode(path, raw) }
    }
}

extension WireParameters {
    /// A call's parameters with its secret members, as the server diverted them.
    public init(_ call: VarlinkCall) {
        self.init(call.parameters, secrets: call.secrets.compactMapValues { $0 as? SecretField })
    }
}

extension VarlinkReply {
    /// A typed reply, encoded here (secrets as base64 straight from secure memory); the server wipes
    /// its buffer after the write.
    public static func typed(_ reply: some WireEncodable) -> VarlinkReply {
        .encoded(VarlinkWire.encodeParameters(reply))
    }
}

extension VarlinkError {
    /// The interface's `InvalidParameter {parameter, reason}` for a parameter that failed validation.
    public init(_ error: WireParameterError, interface: String) {
        self.init(name: interface + ".InvalidParameter", parameters: ["parameter": .string(error.parameter), "reason": .string(error.reason)])
    }
}

extension VarlinkError {
    /// The error reply of an interface's declared error, its parameters written by the generated type.
    public init(_ error: some InterfaceError) {
        self.init(name: type(of: error).name, parameters: error.parameters)
    }
}
