import Varlink
import VaultAPI
import VaultCore

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
        switch error.code {
        case .notFound:
            return VarlinkError(name: notFound, parameters: [
                "service": .string(key?.service ?? ""), "account": .string(key?.account ?? ""),
            ])
        case .locked:
            return VarlinkError(name: locked, parameters: ["reason": .string(error.reason)])
        case .invalidArgument:
            return VarlinkError(name: invalidParameter, parameters: ["parameter": "", "reason": .string(error.reason)])
        case .wrongPassphrase:
            return VarlinkError(name: wrongPassphrase)
        case .integrityFailure:
            return VarlinkError(name: integrityFailure, parameters: ["reason": .string(error.reason)])
        case .permissionDenied:
            return VarlinkError(name: permissionDenied, parameters: ["operation": "", "reason": .string(error.reason)])
        case .keySourceRejected, .notInitialized, .alreadyInitialized, .unsupportedFormat, .kdfCostOutOfBounds:
            return VarlinkError(name: unsupported, parameters: ["reason": .string(error.reason)])
        default:
            return VarlinkError(name: storageFailure, parameters: ["reason": .string(error.reason)])
        }
    }

    /// The vault error a client reports for a varlink error reply.
    public static func decode(_ error: VarlinkError) -> VaultError {
        let reason = error.parameters["reason"]?.stringValue
        switch error.name {
        case notFound:
            let service = error.parameters["service"]?.stringValue ?? ""
            let account = error.parameters["account"]?.stringValue ?? ""
            return VaultError(.notFound, "no item for service \(service.debugDescription), account \(account.debugDescription)")
        case locked:
            return VaultError(.locked, reason ?? "the vault is locked: run `sortedvault unlock`")
        case permissionDenied, "org.varlink.service.PermissionDenied":
            let operation = error.parameters["operation"]?.stringValue ?? "this"
            return VaultError(.permissionDenied,
                "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case invalidParameter, "org.varlink.service.InvalidParameter":
            let parameter = error.parameters["parameter"]?.stringValue ?? ""
            return VaultError(.invalidArgument, reason ?? "invalid parameter \(parameter)")
        case wrongPassphrase:
            return VaultError(.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case tooManyAttempts:
            let wait = error.parameters["retryAfterSeconds"]?.doubleValue ?? 1
            return VaultError(.wrongPassphrase, "too many failed unlocks: wait \(Int(wait.rounded(.up))) s and try again")
        case integrityFailure:
            return VaultError(.integrityFailure, reason ?? "a stored item failed its integrity check")
        case unsupported:
            return VaultError(.unavailable, reason ?? "the daemon cannot do this in its current configuration")
        case storageFailure:
            return VaultError(.storageFailure, reason ?? "the daemon's store failed")
        default:
            return VaultError(.storageFailure, "the daemon answered with \(error.name)")
        }
    }
}
