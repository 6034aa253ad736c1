import BoundedJSON

/// What a client tells its user for an error reply of `org.sortedvault.vault` or
/// `org.sortedvault.session` (or of varlink itself): the kind of failure and a message safe to
/// print. The one reading of error replies: `VaultClient` and `SessionClient` turn it into a
/// `VaultError`, the lean CLI into a `WireFailure`, each by its ``Kind``.
///
/// ```swift
/// let report = ErrorReplyReport.vault("org.sortedvault.vault.Locked", [:])
/// // report.kind == .locked, report.message == "the vault is locked: run `sortedvault unlock`"
/// ```
///
/// Parameters are read one by one and leniently: a reply missing some of them still gives its
/// error's text. Error parameters never hold secrets, so the message holds none either.
public struct ErrorReplyReport: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case notFound, locked, permissionDenied, invalidParameter, wrongPassphrase, integrityFailure
        /// The daemon cannot do this in its configuration (`Unsupported`).
        case unsupported
        /// The OAuth2 provider refused (`ProviderRejected`).
        case providerRejected
        /// The daemon's store failed, or an error this client does not know.
        case failure
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// An error reply of `org.sortedvault.vault` (or of varlink itself).
    public static func vault(_ name: String, _ parameters: [String: JSONValue]) -> ErrorReplyReport {
        typealias I = VaultInterface
        let reason = parameters["reason"]?.stringValue
        switch name {
        case I.NotFound.name:
            let service = parameters["service"]?.stringValue ?? ""
            let account = parameters["account"]?.stringValue ?? ""
            return ErrorReplyReport(.notFound, "no item for service \(service.debugDescription), account \(account.debugDescription)")
        case I.Locked.name:
            return ErrorReplyReport(.locked, reason ?? "the vault is locked: run `sortedvault unlock`")
        case I.PermissionDenied.name, "org.varlink.service.PermissionDenied":
            return permissionDenied(parameters)
        case I.InvalidParameter.name, "org.varlink.service.InvalidParameter":
            return invalidParameter(parameters)
        case I.WrongPassphrase.name:
            return ErrorReplyReport(.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case I.TooManyAttempts.name:
            let wait = parameters["retryAfterSeconds"]?.doubleValue ?? 1
            return ErrorReplyReport(.wrongPassphrase, "too many failed unlocks: wait \(Int(wait.rounded(.up))) s and try again")
        case I.IntegrityFailure.name:
            return ErrorReplyReport(.integrityFailure, reason ?? "a stored item failed its integrity check")
        case I.Unsupported.name:
            return ErrorReplyReport(.unsupported, reason ?? "the daemon cannot do this in its current configuration")
        case I.StorageFailure.name:
            return ErrorReplyReport(.failure, reason ?? "the daemon's store failed")
        default:
            return ErrorReplyReport(.failure, "the daemon answered with \(name)")
        }
    }

    /// An error reply of `org.sortedvault.session`; anything else is read as the vault interface's.
    public static func session(_ name: String, _ parameters: [String: JSONValue]) -> ErrorReplyReport {
        typealias I = SessionInterface
        let reason = parameters["reason"]?.stringValue
        switch name {
        case I.NoSession.name:
            let service = parameters["service"]?.stringValue ?? ""
            let account = parameters["account"]?.stringValue ?? ""
            return ErrorReplyReport(.notFound,
                "no login is stored for service \(service.debugDescription), account \(account.debugDescription); sign in")
        case I.Locked.name:
            return ErrorReplyReport(.locked, "the vault is locked: run `sortedvault unlock`")
        case I.PermissionDenied.name:
            return permissionDenied(parameters)
        case I.InvalidParameter.name:
            return invalidParameter(parameters)
        case I.ProviderRejected.name:
            // Read leniently: a reply with a reason but no provider error code still says why.
            return ErrorReplyReport(.providerRejected, reason ?? "the provider refused the request")
        case I.IntegrityFailure.name:
            return ErrorReplyReport(.integrityFailure, reason ?? "a stored login failed its integrity check")
        case I.StorageFailure.name:
            return ErrorReplyReport(.failure, reason ?? "the daemon's store failed")
        default:
            return vault(name, parameters)
        }
    }

    private static func permissionDenied(_ parameters: [String: JSONValue]) -> ErrorReplyReport {
        let operation = parameters["operation"]?.stringValue ?? "this"
        return ErrorReplyReport(.permissionDenied,
            "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
    }

    private static func invalidParameter(_ parameters: [String: JSONValue]) -> ErrorReplyReport {
        ErrorReplyReport(.invalidParameter,
                         parameters["reason"]?.stringValue ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
    }
}
