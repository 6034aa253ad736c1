import Logging
import Varlink
import VaultPolicy
import VaultProtocol

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

    /// Throws `PermissionDenied` of `interface` (both of the daemon's interfaces declare it) unless
    /// the policy allows the call.
    func require(_ peer: PeerCredentials, _ operation: String, service: String?,
                 interface: String = VaultInterfaceDescription.name) throws {
        try enforce(decide(peer, operation, service: service), peer, operation, service: service, interface: interface)
    }

    /// The policy's decision for the call, not yet recorded: a fast path decides once, reads, and
    /// ``enforce(_:_:_:service:interface:)``s the same decision only when it answers.
    func decide(_ peer: PeerCredentials, _ operation: String, service: String?) -> Decision {
        policy.decide(request(peer, operation, service))
    }

    /// Records `decision` (access log, and the daemon's log) and throws `PermissionDenied` of
    /// `interface` when it denies.
    func enforce(_ decision: Decision, _ peer: PeerCredentials, _ operation: String, service: String?,
                 interface: String = VaultInterfaceDescription.name) throws {
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
            var parameters: [String: JSONValue] = ["operation": .string(operation)]
            if let service { parameters["service"] = .string(service) }
            throw VarlinkError(name: interface + ".PermissionDenied", parameters: parameters)
        }
    }

    /// Whether the policy allows the call, without logging (for filtering list results).
    func allows(_ peer: PeerCredentials, _ operation: String, service: String?) -> Bool {
        decide(peer, operation, service: service).allowed
    }

    /// Whether any rule could ever allow this peer anything; strangers are refused at accept.
    func admits(_ peer: PeerCredentials) -> Bool {
        policy.admits(request(peer, "status", nil).peer)
    }

    private func request(_ peer: PeerCredentials, _ operation: String, _ service: String?) -> AccessRequest {
        AccessRequest(peer: PeerIdentity(uid: peer.uid, gid: peer.gid, groups: peer.groups, executable: peer.executable),
                      operation: operation, service: service)
    }
}
