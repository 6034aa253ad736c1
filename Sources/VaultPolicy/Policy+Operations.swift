extension Policy {
    /// The operation names a rule's `operations` list may use.
    ///
    /// They are the daemon's method names. To add an operation, append its name here; policy
    /// files naming an operation not in this list are refused, so a typo such as "retreive"
    /// cannot silently grant nothing.
    public static let knownOperations: [String] = [
        "store", "retrieve", "delete", "list", "status", "lock", "unlock", "change-passphrase",
        "session.save", "session.autologin", "session.refresh", "session.logout",
        "session.status", "session.watch", "session.list",
    ]

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
