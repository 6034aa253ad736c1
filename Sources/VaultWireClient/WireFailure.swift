import BoundedJSON

/// What the CLI prints (`sortedvault: MESSAGE` on standard error) and the status it exits with,
/// for an error reply or a failed call. The texts and statuses are those of `VaultWireError.decode`,
/// `SessionWireError.decode` and `VaultClient`'s transport errors mapped through `ExitStatus`;
/// `WireFailureParityTests` checks that they stay the same.
public struct WireFailure: Error, Equatable {
    public let status: ExitStatus
    public let message: String

    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    static let vaultPrefix = "org.sortedvault.vault."
    static let sessionPrefix = "org.sortedvault.session."

    /// An error reply of `org.sortedvault.vault` (or of varlink itself).
    public static func vault(_ name: String, _ parameters: [String: JSONValue]) -> WireFailure {
        let reason = parameters["reason"]?.stringValue
        switch name {
        case vaultPrefix + "NotFound":
            let service = parameters["service"]?.stringValue ?? ""
            let account = parameters["account"]?.stringValue ?? ""
            return WireFailure(.notFound, "no item for service \(service.debugDescription), account \(account.debugDescription)")
        case vaultPrefix + "Locked":
            return WireFailure(.locked, reason ?? "the vault is locked: run `sortedvault unlock`")
        case vaultPrefix + "PermissionDenied", "org.varlink.service.PermissionDenied":
            return permissionDenied(parameters)
        case vaultPrefix + "InvalidParameter", "org.varlink.service.InvalidParameter":
            return WireFailure(.usage, reason ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        case vaultPrefix + "WrongPassphrase":
            return WireFailure(.wrongPassphrase, "wrong passphrase: the vault did not unlock; check it and try again")
        case vaultPrefix + "TooManyAttempts":
            let wait = parameters["retryAfterSeconds"]?.doubleValue ?? 1
            return WireFailure(.wrongPassphrase, "too many failed unlocks: wait \(Int(wait.rounded(.up))) s and try again")
        case vaultPrefix + "IntegrityFailure":
            return WireFailure(.integrityFailure, reason ?? "a stored item failed its integrity check")
        case vaultPrefix + "Unsupported":
            return WireFailure(.daemonUnreachable, reason ?? "the daemon cannot do this in its current configuration")
        case vaultPrefix + "StorageFailure":
            return WireFailure(.failure, reason ?? "the daemon's store failed")
        default:
            return WireFailure(.failure, "the daemon answered with \(name)")
        }
    }

    /// An error reply of `org.sortedvault.session`; anything else is read as the vault interface's.
    public static func session(_ name: String, _ parameters: [String: JSONValue]) -> WireFailure {
        let reason = parameters["reason"]?.stringValue
        switch name {
        case sessionPrefix + "NoSession":
            let service = parameters["service"]?.stringValue ?? ""
            let account = parameters["account"]?.stringValue ?? ""
            return WireFailure(.notFound,
                "no login is stored for service \(service.debugDescription), account \(account.debugDescription); sign in")
        case sessionPrefix + "Locked":
            return WireFailure(.locked, "the vault is locked: run `sortedvault unlock`")
        case sessionPrefix + "PermissionDenied":
            return permissionDenied(parameters)
        case sessionPrefix + "InvalidParameter":
            return WireFailure(.usage, reason ?? "invalid parameter \(parameters["parameter"]?.stringValue ?? "")")
        case sessionPrefix + "ProviderRejected":
            return WireFailure(.failure, reason ?? "the provider refused the request")
        case sessionPrefix + "IntegrityFailure":
            return WireFailure(.integrityFailure, reason ?? "a stored login failed its integrity check")
        case sessionPrefix + "StorageFailure":
            return WireFailure(.failure, reason ?? "the daemon's store failed")
        default:
            return vault(name, parameters)
        }
    }

    private static func permissionDenied(_ parameters: [String: JSONValue]) -> WireFailure {
        let operation = parameters["operation"]?.stringValue ?? "this"
        return WireFailure(.permissionDenied,
            "the daemon's access policy does not allow \(operation); ask the vault's owner to add a rule to its policy")
    }

    /// A call that got no reply.
    public static func transport(_ failure: TransportFailure, socketPath: String) -> WireFailure {
        switch failure {
        case .timedOut:
            return WireFailure(.daemonUnreachable, "the daemon at \(socketPath) did not answer in time")
        case .closed:
            return WireFailure(.daemonUnreachable,
                "the daemon at \(socketPath) closed the connection before answering: it stopped or crashed; check its log and try again")
        case .protocolViolation(let detail):
            return WireFailure(.failure, "the daemon at \(socketPath) broke the protocol: \(detail)")
        }
    }

    /// A reply that does not have the shape the method promises.
    public static func malformed(_ what: String) -> WireFailure {
        WireFailure(.failure, "the daemon sent a malformed \(what) reply")
    }
}
