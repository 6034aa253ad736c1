/// One compiled `[[rule]]`: who (uids, gids, executables) may or may not do what (operations) to
/// which services.
///
/// Rules come only from ``Policy``; read them through ``Policy/rules`` for `status` output and
/// debugging. A `nil` peer condition means the key was absent or held "*": any value matches.
public struct Rule: Sendable, Hashable {
    public enum Effect: String, Sendable, Hashable {
        case allow, deny
    }

    public let reference: RuleReference
    public let effect: Effect
    /// Allowed uids, with "@self" already replaced by the daemon's uid; `nil` = any.
    public let uids: Set<UInt32>?
    /// Groups: the rule matches a peer whose effective gid or any supplementary group is listed
    /// (`sg`/`newgrp` change only the effective gid, so it alone would let a member step around a
    /// deny rule); `nil` = any.
    public let gids: Set<UInt32>?
    /// Absolute-path patterns for the peer's executable; `nil` = any, including unknown.
    public let executables: [Glob]?
    /// Operation patterns: known names, "*", or prefixes such as "session.*".
    public let operations: [Glob]
    /// Service patterns. For a request without a service see ``matches(_:)``.
    public let services: [Glob]

    /// Whether `services` covers every service name (it holds "*").
    public var coversEveryService: Bool { services.contains { $0.pattern == "*" } }

    public var name: String { reference.name }

    /// True when every condition of the rule holds for `request`.
    ///
    /// A request without a service is one of two kinds (``Policy/vaultWideOperations`` and
    /// ``Policy/listingOperations``): a rule whose services cover every service decides both; a rule
    /// for some services only allows a listing (each entry is then checked with its own service) and
    /// decides nothing that acts on the whole vault — so an app allowed `com.a.*` cannot lock the
    /// vault, and a deny rule for `com.bank*` cannot refuse `status` to the owner.
    public func matches(_ request: AccessRequest) -> Bool {
        guard matchesPeerAndOperation(request) else { return false }
        if let service = request.service {
            return services.contains { $0.matches(service) }
        }
        if coversEveryService { return true }
        return effect == .allow && request.isListing
    }

    /// True when the rule's peer conditions and operations hold for `request`, whatever its service.
    func matchesPeerAndOperation(_ request: AccessRequest) -> Bool {
        matchesPeerAndOperation(request, anyExecutable: false)
    }

    /// True when the rule would decide `request`, or an entry of a listing, if the peer ran some
    /// executable the rule names.
    func couldMatchWithAnyExecutable(_ request: AccessRequest) -> Bool {
        guard matchesPeerAndOperation(request, anyExecutable: true) else { return false }
        if let service = request.service { return services.contains { $0.matches(service) } }
        // A listing's entries are then decided one by one, by deny rules for some services too.
        return coversEveryService || request.isListing
    }

    private func matchesPeerAndOperation(_ request: AccessRequest, anyExecutable: Bool) -> Bool {
        let peer = request.peer
        if let uids, !uids.contains(peer.uid) { return false }
        if let gids, !Self.peer(peer, isIn: gids, deciding: effect) { return false }
        if let executables, !anyExecutable {
            guard let executable = peer.executable, executables.contains(where: { $0.matches(executable) }) else {
                return false
            }
        }
        return operations.contains(where: { $0.matches(request.operation) })
    }

    /// Group membership: effective gid or supplementary groups. When the supplementary groups are
    /// unknown, a deny rule matches (fail closed) and an allow rule looks at the effective gid.
    private static func peer(_ peer: PeerIdentity, isIn gids: Set<UInt32>, deciding effect: Effect) -> Bool {
        if gids.contains(peer.gid) { return true }
        guard let groups = peer.groups else { return effect == .deny }
        return groups.contains { gids.contains($0) }
    }
}
