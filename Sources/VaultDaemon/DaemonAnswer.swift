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
