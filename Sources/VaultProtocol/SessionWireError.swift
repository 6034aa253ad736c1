import Foundation
import Varlink
import VaultAPI
import VaultCore
import VaultCrypto
import VaultSession

/// Maps `VaultError` to the errors of `org.sortedvault.session` and back (see ``VaultWireError``).
public enum SessionWireError {
    public static let noSession = SessionInterface.Errors.noSession
    public static let locked = SessionInterface.Errors.locked
    public static let permissionDenied = SessionInterface.Errors.permissionDenied
    public static let invalidParameter = SessionInterface.Errors.invalidParameter
    public static let providerRejected = SessionInterface.Errors.providerRejected
    public static let integrityFailure = SessionInterface.Errors.integrityFailure
    public static let storageFailure = SessionInterface.Errors.storageFailure

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

    /// The vault error a client reports for an error reply of this interface; each declared error
    /// is read by its generated type (see ``VaultWireError/decode(_:)``).
    public static func decode(_ error: VarlinkError) -> VaultError {
        typealias I = SessionInterface
        let parameters = error.parameters
        switch error.name {
        case I.NoSession.name:
            let missing = I.NoSession.decode(parameters)
            return VaultError(.notFound, "no login is stored for service \((missing?.service ?? "").debugDescription), account \((missing?.account ?? "").debugDescription); sign in")
        case I.Locked.name:
            return VaultError(.locked, "the vault is locked: run `sortedvault unlock`")
        case I.PermissionDenied.name:
            let operation = I.PermissionDenied.decode(parameters)?.operation ?? "this"
            return VaultError(.permissionDenied,
                "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case I.InvalidParameter.name:
            let invalid = I.InvalidParameter.decode(parameters)
            return VaultError(.invalidArgument, invalid?.reason ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        case I.ProviderRejected.name:
            // Read leniently: a reply with a reason but no provider error code still says why.
            return VaultError(.providerRejected, parameters["reason"]?.stringValue ?? "the provider refused the request")
        case I.IntegrityFailure.name:
            return VaultError(.integrityFailure, I.IntegrityFailure.decode(parameters)?.reason ?? "a stored login failed its integrity check")
        case I.StorageFailure.name:
            return VaultError(.storageFailure, I.StorageFailure.decode(parameters)?.reason ?? "the daemon's store failed")
        default:
            return VaultWireError.decode(error)
        }
    }
}
