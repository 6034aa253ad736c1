/// One varlink interface a ``VarlinkServer`` serves.
///
/// ```swift
/// struct Vault: VarlinkInterface {
///     let name = "org.sortedvault.vault"
///     let interfaceDescription = vaultIDL
///     func handle(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> VarlinkReply {
///         switch call.member {
///         case "Retrieve": return ["token": .string(try retrieve(call.string("service")))]
///         default: throw VarlinkError.methodNotFound(call.method)
///         }
///     }
/// }
/// ```
///
/// The server answers `MethodNotFound` itself for any method not declared with `method Name(` in
/// ``interfaceDescription``; the handler only sees declared methods.
public protocol VarlinkInterface: Sendable {
    /// The interface name, e.g. `org.sortedvault.vault`.
    var name: String { get }
    /// The interface's IDL text, returned by `org.varlink.service.GetInterfaceDescription`.
    var interfaceDescription: String { get }
    /// Parameters whose string values must never become a Swift `String` (secrets): the server
    /// hands their raw bytes to ``VarlinkSecretParameters/decode`` while it parses the frame, and
    /// the handler finds the result in ``VarlinkCall/secrets``. Nil (the default): none.
    var secretParameters: VarlinkSecretParameters? { get }
    /// Returns the final reply: a dictionary literal of parameters, or ``VarlinkReply/encoded(_:)``
    /// bytes (for replies that carry secrets). For a `more` call, send earlier replies with
    /// `try await context.reply(params)` (continues: true) first. Throw ``VarlinkError`` for
    /// error replies; any other thrown error becomes a generic
    /// ``VarlinkError/internalError`` reply with no detail from the error text.
    ///
    /// A connection's calls are handled one at a time, in order. For a `oneway` call the
    /// returned parameters are discarded. `upgrade` is passed through but not implemented: the
    /// connection stays in varlink after the reply.
    ///
    /// Handlers run on Swift's cooperative thread pool, which has one thread per core: do not
    /// block in them (long synchronous I/O, sleeping, waiting on a semaphore). Move such work to
    /// a thread of its own, or every connection stalls.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> VarlinkReply

    /// The fast path: answers `call` on the connection's event loop, without a task, or returns nil
    /// to have ``handle(_:context:)`` answer it as usual. Errors are replied as from `handle`.
    ///
    /// Answer here only what needs no waiting: a lock taken for microseconds and a read that takes
    /// microseconds (a prepared SQLite point read, a secretbox open). Never a write and its fsync, a key
    /// derivation, a keyring or network call, or a `more` call: every connection of this loop waits
    /// while it runs. The default answers nothing here.
    func handleOnLoop(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkReply?
}

/// Which parameters of an interface's calls are secrets, and what they become.
///
/// The frame is parsed before the server knows which method (key order is free), so the paths of
/// all of an interface's methods apply to every call of every interface the server serves.
public struct VarlinkSecretParameters: Sendable {
    /// Dotted paths below `parameters`, e.g. `passphrase` or `provider.clientSecret`; no path runs
    /// through an array.
    public let paths: Set<String>
    /// Makes the handler's value from the raw bytes of the JSON string (between its quotes,
    /// escapes not resolved; valid only during the call), e.g. base64 decoded into secure memory.
    public let decode: @Sendable (_ path: String, _ raw: UnsafeRawBufferPointer) -> any Sendable
    /// The same paths from the message's root (`parameters.…`), prepared once for the parser
    /// instead of for every frame.
    let messagePaths: JSONDivertedPaths

    public init(paths: Set<String>, decode: @escaping @Sendable (_ path: String, _ raw: UnsafeRawBufferPointer) -> any Sendable) {
        self.paths = paths
        self.decode = decode
        messagePaths = JSONDivertedPaths(Set(paths.map { VarlinkSecretParameters.prefix + $0 }))
    }

    /// Where the paths start in a message.
    static let prefix = "parameters."
}

extension VarlinkInterface {
    public var secretParameters: VarlinkSecretParameters? { nil }
    public func handleOnLoop(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkReply? { nil }
}

extension VarlinkInterface {
    /// The method names declared in ``interfaceDescription`` (lines `method Name(`).
    var declaredMethods: Set<String> {
        var names: Set<String> = []
        for line in interfaceDescription.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " || $0 == "\t" })
            guard trimmed.hasPrefix("method ") else { continue }
            let rest = trimmed.dropFirst("method ".count).drop(while: { $0 == " " })
            let name = rest.prefix(while: { $0.isLetter || $0.isNumber || $0 == "_" })
            if !name.isEmpty { names.insert(String(name)) }
        }
        return names
    }
}
