import BoundedJSON
import Varlink
import VaultAPI
import VaultCore

extension VarlinkError {
    /// The error reply of an interface's declared error, its parameters written by the generated type.
    public init(_ error: some InterfaceError) {
        self.init(name: type(of: error).name, parameters: error.parameters)
    }
}

/// Maps `VaultError` to the interface's varlink errors and back, so that a client sees the same
/// `VaultError.Code` it would get from an in-process store. NotFound and Locked never mix.
public enum VaultWireError {
    /// The varlink error for a vault error. Reasons are safe to send: they never hold secrets.
    public static func encode(_ error: VaultError, key: ItemKey? = nil) -> VarlinkError {
        typealias I = VaultInterface
        switch error.code {
        case .notFound: return VarlinkError(I.NotFound(service: key?.service ?? "", account: key?.account ?? ""))
        case .locked: return VarlinkError(I.Locked(reason: error.reason))
        case .invalidArgument: return VarlinkError(I.InvalidParameter(parameter: "", reason: error.reason))
        case .wrongPassphrase: return VarlinkError(I.WrongPassphrase())
        case .integrityFailure: return VarlinkError(I.IntegrityFailure(reason: error.reason))
        case .permissionDenied: return VarlinkError(I.PermissionDenied(operation: ""))
        case .keySourceRejected, .notInitialized, .alreadyInitialized, .unsupportedFormat, .kdfCostOutOfBounds:
            return VarlinkError(I.Unsupported(reason: error.reason))
        default: return VarlinkError(I.StorageFailure(reason: error.reason))
        }
    }

    /// The vault error a client reports for a varlink error reply (``ErrorReply/vault(_:_:as:)``).
    public static func decode(_ name: String, _ parameters: [String: JSONValue]) -> VaultError {
        let (code, reason) = ErrorReply.vault(name, parameters, as: VaultError.Code.self)
        return VaultError(code, reason)
    }
}

/// The vault's codes for error replies, where their names differ from the reply's kinds.
extension VaultError.Code: ErrorReplyCode {
    public static var invalidParameter: Self { .invalidArgument }
    public static var unsupported: Self { .unavailable }
    public static var failure: Self { .storageFailure }
}
