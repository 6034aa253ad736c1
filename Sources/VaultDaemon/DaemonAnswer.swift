import Varlink
import VaultAPI
import VaultCore
import VaultProtocol

extension VarlinkAnswer {
    /// A daemon interface's answer to `call`, now or from its task, with the errors every method
    /// shares turned into the interface's error replies: a bad parameter into `InvalidParameter`,
    /// a `VaultError` by `encode` (naming the call's item when it has one).
    static func daemon(_ call: VarlinkCall, interface: String,
                       encode: @escaping @Sendable (VaultError, ItemKey?) -> VarlinkError,
                       _ body: () throws -> VarlinkAnswer) throws -> VarlinkAnswer {
        let parameters = WireParameters(call)
        return try mappingErrors({ error in
            switch error {
            case let error as WireParameterError: return VarlinkError(error, interface: interface)
            case let error as VaultError: return encode(error, try? VaultInterface.ItemName(from: parameters).key())
            default: return error
            }
        }, body)
    }
}
