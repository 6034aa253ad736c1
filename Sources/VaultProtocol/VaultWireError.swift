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

    /// The vault error a client reports for a varlink error reply (``ErrorReplyReport/vault(_:_:)``).
    public static func decode(_ error: VarlinkError) -> VaultError {
        VaultError(ErrorReplyReport.vault(error.name, error.parameters))
    }
}

extension VaultError {
    /// The vault error for what a client reads from an error reply: the code of the reply's kind,
    /// the report's message as the reason.
    public init(_ report: ErrorReplyReport) {
        let code: Code
        switch report.kind {
        case .notFound: code = .notFound
        case .locked: code = .locked
        case .permissionDenied: code = .permissionDenied
        case .invalidParameter: code = .invalidArgument
        case .wrongPassphrase: code = .wrongPassphrase
        case .integrityFailure: code = .integrityFailure
        case .unsupported: code = .unavailable
        case .providerRejected: code = .providerRejected
        case .failure: code = .storageFailure
        }
        self.init(code, report.message)
    }
}
