import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// Maps `VaultError` to the errors of `org.sortedvault.session` and back (see ``VaultWireError``).
public enum SessionWireError {
    public static func malformed(_ what: String) -> VaultError {
        VaultError.storageFailure("the daemon sent a malformed \(what) reply")
    }

    // MARK: Errors

    /// The interface's error for a vault error.
    public static func encode(_ error: VaultError, key: ItemKey?) -> VarlinkError {
        typealias I = SessionInterface
        switch error.code {
        case .notFound: return VarlinkError(I.NoSession(service: key?.service ?? "", account: key?.account ?? ""))
        case .locked: return VarlinkError(I.Locked())
        case .invalidArgument: return VarlinkError(I.InvalidParameter(parameter: "", reason: error.reason))
        case .permissionDenied: return VarlinkError(I.PermissionDenied(operation: ""))
        case .providerRejected: return VarlinkError(I.ProviderRejected(error: "", reason: error.reason))
        case .integrityFailure: return VarlinkError(I.IntegrityFailure(reason: error.reason))
        default: return VarlinkError(I.StorageFailure(reason: error.reason))
        }
    }

    /// The vault error a client reports for an error reply of this interface
    /// (``ErrorReply/session(_:_:as:)``).
    public static func decode(_ name: String, _ parameters: [String: JSONValue]) -> VaultError {
        if name == SessionInterface.LoginStateMismatch.name {
            return VaultError(.callbackMismatch, "the callback's state is not this sign-in's: it was ignored, and the sign-in still waits for its own")
        }
        let (code, reason) = ErrorReply.session(name, parameters, as: VaultError.Code.self)
        return VaultError(code, reason)
    }
}
