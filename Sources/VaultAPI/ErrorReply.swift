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
    /// A sign-in's callback carried another sign-in's state (`LoginStateMismatch`).
    static var callbackMismatch: Self { get }
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
/// A reply is read by its error type's generated decoder (`Errors.Reply`), and the switches below
/// name every error the interface files declare: an error added to them is a build error here
/// until it has its code and text. A reply of an undeclared error, or of a declared one whose
/// parameters are not of its shape, is a failure naming the error. Error parameters never hold
/// secrets, so the message holds none either.
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
        if let error = VaultInterface.Errors.Reply(name: name, parameters: parameters) { return vault(error) }
        if let error = SessionInterface.Errors.Reply(name: name, parameters: parameters) { return session(error) }
        switch name {
        case "org.varlink.service.PermissionDenied":
            return (.permissionDenied, denied(nil))
        case "org.varlink.service.InvalidParameter":
            return (.invalidParameter, "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        default:
            return (.failure, "the daemon answered with \(name)")
        }
    }

    private static let locked = "the vault is locked: run `sortedvault unlock`"

    private static func denied(_ operation: String?) -> String {
        "the daemon's access policy does not allow \(operation ?? "this"); ask the vault's owner to add a rule to its policy"
    }

    private static func vault<Code: ErrorReplyCode>(_ error: VaultInterface.Errors.Reply) -> (code: Code, message: String) {
        switch error {
        case .notFound(let error):
            (.notFound, "no item for service \(error.service.debugDescription), account \(error.account.debugDescription)")
        case .locked(let error): (.locked, error.reason ?? locked)
        case .permissionDenied(let error): (.permissionDenied, denied(error.operation))
        case .invalidParameter(let error): (.invalidParameter, error.reason)
        case .wrongPassphrase: (.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case .tooManyAttempts(let error):
            (.wrongPassphrase, "too many failed unlocks: wait \(Int(error.retryAfterSeconds.rounded(.up))) s and try again")
        case .integrityFailure(let error): (.integrityFailure, error.reason)
        case .storageFailure(let error): (.failure, error.reason)
        case .unsupported(let error): (.unsupported, error.reason)
        }
    }

    private static func session<Code: ErrorReplyCode>(_ error: SessionInterface.Errors.Reply) -> (code: Code, message: String) {
        switch error {
        case .loginStateMismatch:
            (.callbackMismatch, "the callback's state is not this sign-in's: it was ignored, and the sign-in still waits for its own")
        case .noSession(let error):
            (.notFound, "no login is stored for service \(error.service.debugDescription), account \(error.account.debugDescription); sign in")
        case .locked: (.locked, locked)  // the session interface's Locked carries no reason
        case .permissionDenied(let error): (.permissionDenied, denied(error.operation))
        case .invalidParameter(let error): (.invalidParameter, error.reason)
        case .providerRejected(let error): (.providerRejected, error.reason)
        case .integrityFailure(let error): (.integrityFailure, error.reason)
        case .storageFailure(let error): (.failure, error.reason)
        case .unsupported(let error): (.unsupported, error.reason)
        }
    }
}
