extension Policy {
    /// The operation names a rule's `operations` list may use.
    ///
    /// They are the daemon's method names. To add an operation, append its name here; policy
    /// files naming an operation not in this list are refused, so a typo such as "retreive"
    /// cannot silently grant nothing.
    public static let knownOperations: [String] = [
        "store", "retrieve", "delete", "list", "status", "lock", "unlock", "change-passphrase",
        "session.save", "session.autologin", "session.refresh", "session.logout",
        "session.status", "session.watch", "session.list", "session.login",
        "fleet.revoke", "fleet.status", "fleet.rewrap",
        "export", "session.restore",
    ]

    /// Operations on the whole vault, asked without a service: only a rule whose services cover
    /// every service (`services = ["*"]`) allows or denies them.
    public static let vaultWideOperations: Set<String> = ["status", "lock", "unlock", "change-passphrase", "fleet.status", "fleet.rewrap", "export"]

    /// Operations that may be asked without a service and answer with what the caller may see: a
    /// rule for some services allows the call, and every entry is then checked with its own
    /// service; only a rule for every service denies the whole call.
    public static let listingOperations: Set<String> = ["list", "session.list", "session.watch"]

    /// Whether `peer` could be allowed anything at all: some operation that an allow rule grants it
    /// for some service, and that no rule for every service denies it. The daemon refuses other
    /// peers when they connect (a rule for a few services never makes anyone a stranger).
    public func admits(_ peer: PeerIdentity) -> Bool {
        Self.knownOperations.contains { operation in
            let asked = AccessRequest(peer: peer, operation: operation, service: nil)
            guard rules.contains(where: { $0.effect == .allow && $0.matchesPeerAndOperation(asked) }) else { return false }
            return !rules.contains { $0.effect == .deny && $0.coversEveryService && $0.matchesPeerAndOperation(asked) }
        }
    }

    /// True when `pattern` may appear in `operations`: a known name, "*", or a prefix glob such as
    /// "session.*" that covers at least one known name.
    static func isValidOperationPattern(_ pattern: String) -> Bool {
        if pattern == "*" || knownOperations.contains(pattern) { return true }
        guard pattern.hasSuffix(".*") else { return false }
        let prefix = pattern.dropLast()
        if prefix.contains("*") || prefix.contains("?") { return false }
        return knownOperations.contains { $0.hasPrefix(prefix) }
    }
}
