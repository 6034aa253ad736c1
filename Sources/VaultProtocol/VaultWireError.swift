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
    public static let notFound = VaultInterface.Errors.notFound
    public static let locked = VaultInterface.Errors.locked
    public static let permissionDenied = VaultInterface.Errors.permissionDenied
    public static let invalidParameter = VaultInterface.Errors.invalidParameter
    public static let wrongPassphrase = VaultInterface.Errors.wrongPassphrase
    public static let tooManyAttempts = VaultInterface.Errors.tooManyAttempts
    public static let integrityFailure = VaultInterface.Errors.integrityFailure
    public static let storageFailure = VaultInterface.Errors.storageFailure
    public static let unsupported = VaultInterface.Errors.unsupported

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

    /// The vault error a client reports for a varlink error reply; each declared error is read by
    /// its generated type (a reply missing its parameters still gives the error's text).
    public static func decode(_ error: VarlinkError) -> VaultError {
        typealias I = VaultInterface
        let parameters = error.parameters
        switch error.name {
        case I.NotFound.name:
            let found = I.NotFound.decode(parameters)
            return VaultError(.notFound, "no item for service \((found?.service ?? "").debugDescription), account \((found?.account ?? "").debugDescription)")
        case I.Locked.name:
            return VaultError(.locked, I.Locked.decode(parameters)?.reason ?? "the vault is locked: run `sortedvault unlock`")
        case I.PermissionDenied.name, "org.varlink.service.PermissionDenied":
            let operation = parameters["operation"]?.stringValue ?? "this"
            return VaultError(.permissionDenied,
                "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case I.InvalidParameter.name, "org.varlink.service.InvalidParameter":
            let reason = parameters["reason"]?.stringValue
            return VaultError(.invalidArgument, reason ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        case I.WrongPassphrase.name:
            return VaultError(.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case I.TooManyAttempts.name:
            let wait = I.TooManyAttempts.decode(parameters)?.retryAfterSeconds ?? 1
            return VaultError(.wrongPassphrase, "too many failed unlocks: wait \(Int(wait.rounded(.up))) s and try again")
        case I.IntegrityFailure.name:
            return VaultError(.integrityFailure, I.IntegrityFailure.decode(parameters)?.reason ?? "a stored item failed its integrity check")
        case I.Unsupported.name:
            return VaultError(.unavailable, I.Unsupported.decode(parameters)?.reason ?? "the daemon cannot do this in its current configuration")
        case I.StorageFailure.name:
            return VaultError(.storageFailure, I.StorageFailure.decode(parameters)?.reason ?? "the daemon's store failed")
        default:
            return VaultError(.storageFailure, "the daemon answered with \(error.name)")
        }
    }
}
