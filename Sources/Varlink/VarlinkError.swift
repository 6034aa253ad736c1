/// A varlink error reply: a fully qualified error name and its parameters.
///
/// Throw one from ``VarlinkInterface/handle(_:context:)`` to answer with that error; the client
/// ``VarlinkConnection`` throws one when the service answers with an error.
///
/// ```swift
/// throw VarlinkError(name: "org.sortedvault.vault.NotFound", parameters: ["service": .string(service)])
/// ```
///
/// Error parameters travel to the client: never put a secret in them. `description` prints the
/// name and the parameter names only.
public struct VarlinkError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The fully qualified error name, e.g. `org.sortedvault.vault.NotFound`.
    public let name: String
    /// The error's parameters, sent as the reply's `parameters`.
    public let parameters: [String: JSONValue]

    public init(name: String, parameters: [String: JSONValue] = [:]) {
        self.name = name
        self.parameters = parameters
    }

    public var description: String {
        if parameters.isEmpty { return "varlink error \(name)" }
        return "varlink error \(name) (parameters: \(parameters.keys.sorted().joined(separator: ", ")))"
    }
}

extension VarlinkError {
    /// `org.varlink.service.InvalidParameter`: the named parameter is missing, of the wrong type,
    /// or has an unacceptable value.
    public static func invalidParameter(_ parameter: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)])
    }

    /// `org.varlink.service.MethodNotFound`: the interface has no such method.
    public static func methodNotFound(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotFound", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.InterfaceNotFound`: the service does not provide the interface.
    public static func interfaceNotFound(_ interface: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": .string(interface)])
    }

    /// `org.varlink.service.MethodNotImplemented`: the interface declares the method but this
    /// service does not implement it.
    public static func methodNotImplemented(_ method: String) -> VarlinkError {
        VarlinkError(name: "org.varlink.service.MethodNotImplemented", parameters: ["method": .string(method)])
    }

    /// `org.varlink.service.ExpectedMore`: the method streams its replies and must be called
    /// with `more: true`.
    public static let expectedMore = VarlinkError(name: "org.varlink.service.ExpectedMore")

    /// `org.varlink.service.PermissionDenied`: the caller may not call this method.
    public static let permissionDenied = VarlinkError(name: "org.varlink.service.PermissionDenied")

    /// The namespace of the errors this implementation adds for transport problems.
    static let transportNamespace = "org.sortedvault.varlink"

    /// The message was not a JSON object with a string `method` (and optional object
    /// `parameters` and boolean flags); the server closes the connection after this reply.
    public static let invalidMessage = VarlinkError(name: "\(transportNamespace).InvalidMessage")

    /// A message exceeded the server's frame limit; the server closes the connection after this reply.
    public static func frameTooLarge(limit: Int) -> VarlinkError {
        VarlinkError(name: "\(transportNamespace).FrameTooLarge", parameters: ["limit": .int(Int64(limit))])
    }

    /// The caller's user, or the whole server, has as many connections as allowed; the server
    /// closes the new connection after this reply. Close idle connections and retry.
    public static let connectionLimitReached = VarlinkError(name: "\(transportNamespace).ConnectionLimitReached")

    /// The calling process no longer runs the executable file it connected with: it exec'd another
    /// program with the connection open, or the file was deleted or replaced (an upgrade), and an
    /// access rule naming executables could decide the call, so it is refused: reconnect, or
    /// restart the program after an upgrade.
    public static let executableChanged = VarlinkError(name: "\(transportNamespace).ExecutableChanged")

    /// The handler failed with an error that is not a ``VarlinkError``. Deliberately carries no
    /// detail: the server's log has the method name.
    public static let internalError = VarlinkError(name: "\(transportNamespace).InternalError")
}
