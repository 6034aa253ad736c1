import Logging
import Varlink
import VaultAPI
import VaultPolicy
import VaultClient

/// The policy check in front of every method, and the log line that records each decision
/// (who, what, allowed or denied, and which rule decided; never a secret or an account name).
struct AccessControl: Sendable {
    /// The policy in force (a reload replaces it whole).
    let policySource: PolicySource
    var policy: Policy { policySource.policy }
    let logger: Logger
    /// How the daemon's log names a service: as the access log does (the journal is at rest too).
    var names: LogNames = .plain
    /// The owner's decision log (see ``AccessLog``); every decision of ``require`` goes there.
    var accessLog: AccessLog? = nil
    /// Whether the peer still runs the executable file it connected with (it reads `/proc`); asked
    /// only for a decision that a rule with `executables` could make (``Decision/dependsOnExecutable``).
    var executableIsUnchanged: @Sendable (PeerCredentials) -> Bool = { $0.executableIsUnchanged() }

    /// Throws `PermissionDenied` of `interface` (both of the daemon's interfaces declare it) unless
    /// the policy allows the call.
    /// `forSomeService`: asked without a service about something whose service is gone
    /// (``AccessRequest/forSomeService``).
    func require(_ peer: PeerCredentials, _ operation: String, service: String?, forSomeService: Bool = false,
                 interface: String = VaultInterfaceDescription.name) throws {
        try enforce(decide(peer, operation, service: service, forSomeService: forSomeService), peer, operation, service: service,
                    interface: interface)
    }

    /// The policy's decision for the call, not yet recorded (``require`` records it; ``allows``
    /// filters a listing with it).
    func decide(_ peer: PeerCredentials, _ operation: String, service: String?, forSomeService: Bool = false) -> Decision {
        policy.decide(request(peer, operation, service, forSomeService: forSomeService))
    }

    /// Records `decision` (access log, and the daemon's log) and throws `PermissionDenied` of
    /// `interface` when it denies. A decision an executable rule could make was made on the
    /// executable read at accept: when the peer has exec'd another program since, or the file was
    /// deleted or replaced, the call is refused with `ExecutableChanged` (reconnect to be judged anew).
    func enforce(_ decision: Decision, _ peer: PeerCredentials, _ operation: String, service: String?,
                 interface: String = VaultInterfaceDescription.name) throws {
        if decision.dependsOnExecutable, !executableIsUnchanged(peer) {
            logger.notice("call refused: the peer no longer runs the executable it connected with", metadata: [
                "uid": "\(peer.uid)", "pid": "\(peer.pid)", "exe": "\(peer.executable ?? "?")", "operation": "\(operation)",
            ])
            throw VarlinkError.executableChanged
        }
        accessLog?.record(peer, operation: operation, service: service, decision: decision)
        // Allowed calls are logged at debug level: build the line only when someone will see it.
        guard !decision.allowed || logger.logLevel <= .debug else { return }
        var metadata: Logger.Metadata = [
            "uid": "\(peer.uid)", "gid": "\(peer.gid)", "pid": "\(peer.pid)",
            "exe": "\(peer.executable ?? "?")", "operation": "\(operation)", "decision": "\(decision)",
        ]
        if let service { metadata["service"] = "\(names.field(service))" }
        if decision.allowed {
            logger.debug("access allowed", metadata: metadata)
        } else {
            logger.notice("access denied", metadata: metadata)
            if interface == SessionInterface.name {
                throw VarlinkError(SessionInterface.PermissionDenied(operation: operation, service: service))
            }
            throw VarlinkError(VaultInterface.PermissionDenied(operation: operation, service: service))
        }
    }

    /// Whether the policy allows the call, without logging (for filtering list results); false
    /// when an executable rule could decide it and the peer no longer runs the file it connected with.
    func allows(_ peer: PeerCredentials, _ operation: String, service: String?) -> Bool {
        let decision = decide(peer, operation, service: service)
        return decision.allowed && (!decision.dependsOnExecutable || executableIsUnchanged(peer))
    }

    /// Whether any rule could ever allow this peer anything; strangers are refused at accept.
    func admits(_ peer: PeerCredentials) -> Bool {
        policy.admits(request(peer, "status", nil).peer)
    }

    private func request(_ peer: PeerCredentials, _ operation: String, _ service: String?, forSomeService: Bool = false) -> AccessRequest {
        AccessRequest(peer: PeerIdentity(uid: peer.uid, gid: peer.gid, groups: peer.groups, executable: peer.executable),
                      operation: operation, service: service, forSomeService: forSomeService)
    }
}
