/// One varlink interface a ``VarlinkServer`` serves.
///
/// ```swift
/// struct Vault: VarlinkInterface {
///     let name = "org.sortedvault.vault"
///     let interfaceDescription = vaultIDL
///     func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
///         switch call.member {
///         case "Peek": return ["token": .string(try cached(call.string("service")))]
///         case "Fetch":
///             let service = try call.string("service")
///             return .task { ["token": .string(try await fetch(service))] }
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
    /// Answers `call`: ``VarlinkAnswer/reply(_:)`` when the answer is known now, or
    /// ``VarlinkAnswer/task(_:)`` with the work that must wait. Throw ``VarlinkError`` (here or
    /// from the task) for error replies; any other thrown error becomes a generic
    /// ``VarlinkError/internalError`` reply with no detail from the error text.
    ///
    /// It runs on the connection's event loop, and every connection of that loop waits while it
    /// runs: answer now only what needs no waiting (a lock taken for microseconds, a prepared
    /// point read, a secretbox open). A write and its fsync, a key derivation, a keyring or network
    /// call, and every `more` call belong in the task.
    ///
    /// A connection's calls are answered one at a time, in order. For a `oneway` call the reply is
    /// discarded. `upgrade` is passed through but not implemented: the connection stays in varlink
    /// after the reply.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer
}

/// How an interface answers a call: now, on the event loop, or by a task the server runs.
///
/// ```swift
/// return ["count": .int(3)]                                   // a dictionary literal is a reply now
/// return .task { try await context.reply(["n": 1]); return ["n": 2] }   // a `more` call
/// ```
public enum VarlinkAnswer: Sendable, ExpressibleByDictionaryLiteral {
    /// The final reply, known now.
    case reply(VarlinkReply)
    /// Work that must wait: the server runs it in a task and writes its reply, in the order of the
    /// connection's calls. For a `more` call, send earlier replies with
    /// `try await context.reply(params)` (continues: true) first.
    ///
    /// Tasks run on Swift's cooperative thread pool, which has one thread per core: do not block in
    /// them (long synchronous I/O, sleeping, waiting on a semaphore).
    case task(@Sendable () async throws -> VarlinkReply)

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .reply(.parameters(Dictionary(elements, uniquingKeysWith: { _, last in last })))
    }

    /// Runs `body` and passes every error it throws, now or later from its task, through
    /// `transform`: an interface's own error mapping, written once for both.
    public static func mappingErrors(_ transform: @escaping @Sendable (any Error) -> any Error,
                                     _ body: () throws -> VarlinkAnswer) throws -> VarlinkAnswer {
        let answer: VarlinkAnswer
        do {
            answer = try body()
        } catch {
            throw transform(error)
        }
        guard case .task(let work) = answer else { return answer }
        return .task {
            do {
                return try await work()
            } catch {
                throw transform(error)
            }
        }
    }
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
