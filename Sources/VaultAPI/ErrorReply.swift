import BoundedJSON

/// The codes a client reports error replies with: `VaultError.Code` in the full client,
/// `ExitStatus` in the lean CLI. Where a code type has a member of the same name it serves as is;
/// each names its own for the kinds it calls otherwise (`invalidParameter` is `.invalidArgument`
/// for one, `.usage` for the other).
public protocol ErrorReplyCode {
    static var notFound: Self { get }
    static var locked: Self { get }
    static var permissionDenied: Self { get }
    static var invalidParameter: Self { get }
    static var wrongPassphrase: Self { get }
    static var integrityFailure: Self { get }
    /// The daemon cannot do this in its configuration (`Unsupported`).
    static var unsupported: Self { get }
    /// The OAuth2 provider refused (`ProviderRejected`).
    static var providerRejected: Self { get }
    /// The daemon's store failed, or an error this client does not know.
    static var failure: Self { get }
}

/// The one reading of error replies of `org.sortedvault.vault` and `org.sortedvault.session` (and
/// of varlink itself), for both clients: the code to report and a message safe to print.
///
/// ```swift
/// let (code, reason) = ErrorReply.vault("org.sortedvault.vault.Locked", [:], as: VaultError.Code.self)
/// // code == .locked, reason == "the vault is locked: run `sortedvault unlock`"
/// ```
///
/// Parameters are read one by one and leniently: a reply missing some of them still gives its
/// error's text. Error parameters never hold secrets, so the message holds none either.
public enum ErrorReply {
    /// An error reply to a call of `org.sortedvault.vault`; a session error is not one it expects.
    public static func vault<Code: ErrorReplyCode>(_ name: String, _ parameters: [String: JSONValue],
                                                   as: Code.Type = Code.self) -> (code: Code, message: String) {
        guard !name.hasPrefix(SessionInterface.name + ".") else { return (.failure, "the daemon answered with \(name)") }
        return read(name, parameters)
    }

    /// An error reply to a call of `org.sortedvault.session`, which may also answer with the vault
    /// interface's errors.
    public static func session<Code: ErrorReplyCode>(_ name: String, _ parameters: [String: JSONValue],
                                                     as: Code.Type = Code.self) -> (code: Code, message: String) {
        read(name, parameters)
    }

    private static func read<Code: ErrorReplyCode>(_ name: String, _ parameters: [String: JSONValue]) -> (code: Code, message: String) {
        typealias V = VaultInterface
        typealias S = SessionInterface
        let reason = parameters["reason"]?.stringValue
        let service = (parameters["service"]?.stringValue ?? "").debugDescription
        let account = (parameters["account"]?.stringValue ?? "").debugDescription
        let locked = "the vault is locked: run `sortedvault unlock`"
        switch name {
        case V.NotFound.name:
            return (.notFound, "no item for service \(service), account \(account)")
        case S.NoSession.name:
            return (.notFound, "no login is stored for service \(service), account \(account); sign in")
        case V.Locked.name:
            return (.locked, reason ?? locked)
        case S.Locked.name:
            return (.locked, locked)  // the session interface's Locked carries no reason
        case V.PermissionDenied.name, S.PermissionDenied.name, "org.varlink.service.PermissionDenied":
            let operation = parameters["operation"]?.stringValue ?? "this"
            return (.permissionDenied,
                    "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
        case V.InvalidParameter.name, S.InvalidParameter.name, "org.varlink.service.InvalidParameter":
            return (.invalidParameter, reason ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        case V.WrongPassphrase.name:
            return (.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case V.TooManyAttempts.name:
            let wait = parameters["retryAfterSeconds"]?.doubleValue ?? 1
            return (.wrongPassphrase, "too many failed unlocks: wait \(Int(wait.rounded(.up))) s and try again")
        case V.IntegrityFailure.name:
            return (.integrityFailure, reason ?? "a stored item failed its integrity check")
        case S.IntegrityFailure.name:
            return (.integrityFailure, reason ?? "a stored login failed its integrity check")
        case V.Unsupported.name, S.Unsupported.name:
            return (.unsupported, reason ?? "the daemon cannot do this in its current configuration")
        case S.ProviderRejected.name:
            // Read leniently: a reply with a reason but no provider error code still says why.
            return (.providerRejected, reason ?? "the provider refused the request")
        case V.StorageFailure.name, S.StorageFailure.name:
            return (.failure, reason ?? "the daemon's store failed")
        default:
            return (.failure, "the daemon answered with \(name)")
        }
    }
}
