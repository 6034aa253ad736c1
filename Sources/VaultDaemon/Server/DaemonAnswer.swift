import Varlink
import VaultAPI
import VaultCore
import VaultClient

extension VarlinkAnswer {
    /// A daemon interface's answer to `call`, now or from its task: `body` gets the call's method
    /// from the interface's generated list and its parameters. The errors every method shares turn
    /// into the interface's error replies: an unknown method into `MethodNotFound`, a bad parameter
    /// into `InvalidParameter`, a `VaultError` by `encode` (naming the call's item when it has one).
    static func daemon<Method: RawRepresentable<String>>(
        _ call: VarlinkCall, interface: String, encode: @escaping @Sendable (VaultError, ItemKey?) -> VarlinkError,
        _ body: (Method, WireParameters) throws -> VarlinkAnswer) throws -> VarlinkAnswer {
        let parameters = WireParameters(call)
        return try mappingErrors({ error in
            switch error {
            case let error as WireParameterError: return VarlinkError(error, interface: interface)
            case let error as VaultError: return encode(error, try? VaultInterface.ItemName(from: parameters).key())
            default: return error
            }
        }, {
            guard let method = Method(rawValue: call.method) else { throw VarlinkError.methodNotFound(call.method) }
            return try body(method, parameters)
        })
    }
}

/// What every daemon interface has for the generated dispatcher (`VaultInterfaceServer`,
/// `SessionInterfaceServer`, written from `interfaces/*.varlink`): the policy and the activity
/// clock it checks and touches before a body runs.
protocol DaemonInterface: VarlinkInterface {
    var access: AccessControl { get }
    var activity: ActivityClock { get }
    /// The service a call names, checked before the policy sees it; an error names `parameter`.
    /// By default a valid item name (`ItemKey`'s rules).
    func checkedService(_ name: String, parameter: String, method: String) throws -> String
    /// The interface's error reply for a vault error of a body (`item`: the call's item or login,
    /// when it names one). Reasons are safe to send: they never hold secrets.
    static func errorReply(for error: VaultError, item: ItemKey?) -> VarlinkError
}

extension DaemonInterface {
    func checkedService(_ name: String, parameter: String, method: String) throws -> String {
        try VaultInterface.ItemName.checked(name, parameter: parameter)
    }

    /// The policy check in front of every body (generated from the method's tags): throws
    /// `PermissionDenied` unless the policy allows `operation` on `service` (nil: the whole vault,
    /// or every service), and records the call as activity when the method holds off the auto-lock.
    /// `lookedUp`: the service was looked up (``VaultInterfaceServer``'s `lookupService`); nil means
    /// the thing is gone, and a rule for some services lets the body say so.
    func authorize(_ operation: String, service: String?, activity touches: Bool, peer: PeerCredentials, lookedUp: Bool = false) throws {
        try access.require(peer, operation, service: service, forSomeService: lookedUp, interface: name)
        if touches { activity.touch() }
    }
}

/// One call as a body sees it: who asks, and the connection for a `more` call's earlier replies.
struct DaemonCall: Sendable {
    let context: VarlinkCallContext
    /// The caller asked for more than one reply (`Watch`, `Export`).
    let more: Bool
    var peer: PeerCredentials { context.peer }
}

/// A body's answer: its reply now (on the event loop: only what needs no waiting), or later, from
/// a task the server runs.
enum Answer<Reply: WireEncodable & Sendable>: Sendable {
    case now(Reply)
    case later(@Sendable () async throws -> Reply)

    /// The server's answer: the reply encoded now, or the task that encodes it.
    var varlink: VarlinkAnswer {
        switch self {
        case .now(let reply): .reply(.typed(reply))
        case .later(let work): .task { .typed(try await work()) }
        }
    }

    /// The reply, waited for (a body whose policy check itself had to wait).
    func reply() async throws -> VarlinkReply {
        switch self {
        case .now(let reply): .typed(reply)
        case .later(let work): .typed(try await work())
        }
    }
}

extension Answer where Reply == NoParameters {
    /// The empty reply, later, once `work` is done.
    static func completing(_ work: @escaping @Sendable () async throws -> Void) -> Answer {
        .later {
            try await work()
            return NoParameters()
        }
    }
}
