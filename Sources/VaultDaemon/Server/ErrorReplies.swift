import Varlink
import VaultAPI
import VaultClient
import VaultCore

extension VaultService {
    /// A body's vault error as `org.sortedvault.vault`'s own error (clients read it back with
    /// `VaultWireError.decode`). NotFound and Locked never mix.
    static func errorReply(for error: VaultError, item: ItemKey?) -> VarlinkError {
        typealias I = VaultInterface
        switch error.code {
        case .notFound: return VarlinkError(I.NotFound(service: item?.service ?? "", account: item?.account ?? ""))
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
}

extension SessionService {
    /// A body's vault error as `org.sortedvault.session`'s own error (clients read it back with
    /// `SessionWireError.decode`).
    static func errorReply(for error: VaultError, item: ItemKey?) -> VarlinkError {
        typealias I = SessionInterface
        switch error.code {
        case .notFound: return VarlinkError(I.NoSession(service: item?.service ?? "", account: item?.account ?? ""))
        case .locked: return VarlinkError(I.Locked())
        case .invalidArgument: return VarlinkError(I.InvalidParameter(parameter: "", reason: error.reason))
        case .permissionDenied: return VarlinkError(I.PermissionDenied(operation: ""))
        case .providerRejected: return VarlinkError(I.ProviderRejected(error: "", reason: error.reason))
        case .integrityFailure: return VarlinkError(I.IntegrityFailure(reason: error.reason))
        default: return VarlinkError(I.StorageFailure(reason: error.reason))
        }
    }
}
