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
        switch error.code {
        case .notFound:
            return VarlinkError(name: noSession, parameters: ["service": .string(key?.service ?? ""), "account": .string(key?.account ?? "")])
        case .locked:
            return VarlinkError(name: locked)
        case .invalidArgument:
            return VarlinkError(name: invalidParameter, parameters: ["parameter": "", "reason": .string(error.reason)])
        case .permissionDenied:
            return VarlinkError(name: permissionDenied, parameters: ["operation": "", "reason": .string(error.reason)])
        case .providerRejected:
            return VarlinkError(name: providerRejected, parameters: ["error": "", "reason": .string(error.reason)])
        case .integrityFailure:
            return VarlinkError(name: integrityFailure, parameters: ["reason": .string(error.reason)])
        default:
            return VarlinkError(name: storageFailure, parameters: ["reason": .string(error.reason)])
        }
    }

    /// The vault error a client reports for an error reply of this interface.
    public static func decode(_ error: VarlinkError) -> VaultError {
        let reason = error.parameters["reason"]?.stringValue
        switch error.name {
        case noSession:
            let service = error.parameters["service"]?.stringValue ?? ""
            let account = error.parameters["account"]?.stringValue ?? ""
            return VaultError(.notFound, "no login is stored for service \(service.debugDescription), account \(account.debugDescription); sign in")
        case locked:
            return VaultError(.locked, "the vault is locked: run `sortedvault unlock`")
        case permissionDenied:
            let operation = error.parameters["operation"]?.stringValue ?? "this"
            return VaultError(.permissionDenied,
                "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case invalidParameter:
            return VaultError(.invalidArgument, reason ?? "invalid parameter \(error.parameters["parameter"]?.stringValue ?? "")")
        case providerRejected:
            return VaultError(.providerRejected, reason ?? "the provider refused the request")
        case integrityFailure:
            return VaultError(.integrityFailure, reason ?? "a stored login failed its integrity check")
        case storageFailure:
            return VaultError(.storageFailure, reason ?? "the daemon's store failed")
        default:
            return VaultWireError.decode(error)
        }
    }
}
