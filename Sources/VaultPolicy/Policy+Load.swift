extension Policy {
    /// The file in a policy directory that holds ``DaemonSettings``, not rules.
    static let settingsFileName = "settings.toml"

    /// Loads every `*.toml` file in `directory` except `settings.toml`, in sorted name order.
    ///
    /// ```swift
    /// let policy = try Policy.load(directory: "/etc/sortedvault/policy", daemonUID: getuid())
    /// ```
    ///
    /// A directory with no rule file (only `settings.toml`, say) gets ``builtInDefault(daemonUID:)``,
    /// as no directory at all does: default deny with no rules would lock out the owner too.
    ///
    /// - Throws: ``PolicyError`` when the directory or a file is unsafe (symlink, not regular,
    ///   group- or world-writable, owned by someone other than `daemonUID` or root), too large,
    ///   or invalid. Never fall back to a more permissive policy on error.
    public static func load(directory: String, daemonUID: UInt32) throws -> Policy {
        let dir = try PolicyDirectory(path: directory, daemonUID: daemonUID)
        let names = try dir.fileNames(withSuffix: ".toml").filter { $0 != settingsFileName }
        if names.isEmpty { return builtInDefault(daemonUID: daemonUID) }
        var rules: [Rule] = []
        for name in names {
            let file = dir.filePath(name)
            guard let text = try dir.text(of: name) else {
                throw PolicyError(.io, file: file, "disappeared while the policy was loading; try again")
            }
            for rule in try parse(text, file: file, daemonUID: daemonUID).rules {
                try append(rule, to: &rules)
            }
        }
        return Policy(rules: rules)
    }
}
