import Logging

/// The one place where a decoded call meets its interface: routing, the standard errors, and the
/// translation of thrown errors into error replies.
struct VarlinkDispatcher: Sendable {
    private let interfaces: [String: any VarlinkInterface]
    private let declaredMethods: [String: Set<String>]
    let interfaceNames: [String]
    let logger: Logger
    /// The secret parameters of all interfaces, diverted while a frame is parsed (before its method is known).
    let secretParameters: VarlinkSecretParameters?

    init(info: VarlinkServiceInfo, interfaces: [any VarlinkInterface], logger: Logger) {
        var names = ["org.varlink.service"]
        var descriptions = ["org.varlink.service": VarlinkServiceInterface.description]
        for interface in interfaces where descriptions[interface.name] == nil {
            names.append(interface.name)
            descriptions[interface.name] = interface.interfaceDescription
        }
        let service = VarlinkServiceInterface(info: info, interfaceNames: names, descriptions: descriptions)
        var table: [String: any VarlinkInterface] = [service.name: service]
        for interface in interfaces where table[interface.name] == nil { table[interface.name] = interface }
        self.interfaces = table
        self.declaredMethods = table.mapValues(\.declaredMethods)
        self.interfaceNames = names
        self.logger = logger
        self.secretParameters = Self.merged(table.values.compactMap { $0.secretParameters })
    }

    /// How `call` is answered: now (a reply or an error), or by a task whose result is the reply or
    /// an error. Never throws, so that every call gets exactly one final answer.
    func dispatch(_ call: VarlinkCall, context: VarlinkCallContext) -> Answer {
        let interface: any VarlinkInterface
        switch route(call) {
        case .success(let found): interface = found
        case .failure(let error): return .now(.failure(error))
        }
        do {
            switch try interface.handle(call, context: context) {
            case .reply(let reply):
                return .now(.success(reply))
            case .task(let work):
                return .later {
                    do {
                        return .success(try await work())
                    } catch {
                        return failure(error, of: call, context: context)
                    }
                }
            }
        } catch {
            return .now(failure(error, of: call, context: context))
        }
    }

    /// A dispatched call's final answer, or the task that makes it.
    enum Answer {
        case now(Result<VarlinkReply, VarlinkError>)
        case later(@Sendable () async -> Result<VarlinkReply, VarlinkError>)
    }

    private func route(_ call: VarlinkCall) -> Result<any VarlinkInterface, VarlinkError> {
        guard let interface = interfaces[call.interface] else {
            return .failure(.interfaceNotFound(call.interface))
        }
        if let declared = declaredMethods[call.interface], !declared.isEmpty, !declared.contains(call.member) {
            return .failure(.methodNotFound(call.method))
        }
        return .success(interface)
    }

    private func failure(_ error: any Error, of call: VarlinkCall, context: VarlinkCallContext) -> Result<VarlinkReply, VarlinkError> {
        switch error {
        case let error as VarlinkError:
            return .failure(error)
        default:
            // The error's text may quote a secret: log only its type.
            logger.error("Handler failed", metadata: [
                "method": .string(call.method), "uid": "\(context.peer.uid)", "pid": "\(context.peer.pid)",
                "error-type": .string(String(describing: type(of: error))),
            ])
            return .failure(.internalError)
        }
    }

    /// One set of paths for the server; a path declared by two interfaces uses the first decoder.
    private static func merged(_ all: [VarlinkSecretParameters]) -> VarlinkSecretParameters? {
        guard !all.isEmpty else { return nil }
        var decoders: [String: @Sendable (String, UnsafeRawBufferPointer) -> any Sendable] = [:]
        for secrets in all {
            for path in secrets.paths where decoders[path] == nil { decoders[path] = secrets.decode }
        }
        let table = decoders
        return VarlinkSecretParameters(paths: Set(table.keys)) { path, raw in table[path]!(path, raw) }
    }
}
