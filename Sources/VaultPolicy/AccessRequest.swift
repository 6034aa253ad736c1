/// One operation a peer asks for, to be checked with ``Policy/decide(_:)``.
///
/// ```swift
/// let decision = policy.decide(AccessRequest(peer: peer, operation: "retrieve", service: "com.sorted.api"))
/// guard decision.allowed else { throw VaultError(.permissionDenied, "\(decision)") }
/// ```
///
/// Leave `service` `nil` only for operations that concern no single service: the vault-wide ones
/// (``Policy/vaultWideOperations``), which only rules for every service decide, and listings of
/// every service (``Policy/listingOperations``), which a rule for some services allows and whose
/// entries are then checked one by one (``Rule/matches(_:)``).
public struct AccessRequest: Sendable {
    public let peer: PeerIdentity
    /// An operation name from ``Policy/knownOperations``.
    public let operation: String
    public let service: String?
    /// Asked without a service by a call about something whose service could not be found (a
    /// sign-in flow that has ended): decided as a listing is, so a rule for some services allows it
    /// (the call then answers that the thing is gone) and only a rule for every service denies it.
    public let forSomeService: Bool

    public init(peer: PeerIdentity, operation: String, service: String?, forSomeService: Bool = false) {
        self.peer = peer
        self.operation = operation
        self.service = service
        self.forSomeService = forSomeService && service == nil
    }

    /// Decided as a listing of every service: a listing operation, or ``forSomeService``.
    var isListing: Bool { forSomeService || Policy.listingOperations.contains(operation) }
}
