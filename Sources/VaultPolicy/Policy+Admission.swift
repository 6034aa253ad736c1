extension Policy {
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
