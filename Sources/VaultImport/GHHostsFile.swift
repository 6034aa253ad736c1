/// The GitHub CLI's `hosts.yml`, where gh keeps tokens with `auth login --insecure-storage` (and
/// kept them always before 2.24): per host an `oauth_token` beside `user` and `git_protocol`, and
/// since 2.40 a `users:` map with each account's token too.
///
/// ```yaml
/// github.com:
///     users:
///         monalisa:
///             oauth_token: gho_…
///     git_protocol: https
///     oauth_token: gho_…
///     user: monalisa
/// ```
///
/// One credential per host and account, named as git's helper stores `https://HOST` for that user
/// (gh's tokens go over https whatever `git_protocol` says). The active account's token appears
/// twice; both lines are dropped. If the two differ (a login made by an older gh after the
/// migration), both are reported, the active one last.
public enum GHHostsFile {
    public static func parse(_ bytes: UnsafeRawBufferPointer, path: String) throws -> [FoundCredential] {
        try ImportFile.checkSize(bytes.count, path: path)
        let entries = try SimpleYAML.entries(bytes, path: path)
        var found: [FoundCredential] = []
        var hosts: [String] = []
        for entry in entries where entry.path.count == 1 && !hosts.contains(entry.path[0]) { hosts.append(entry.path[0]) }
        for host in hosts {
            let own = entries.filter { $0.path.first == host }
            var perUser: [FoundCredential] = []
            for entry in own where entry.path.count == 4 && entry.path[1] == "users" && entry.path[3] == "oauth_token" {
                if let token = credential(bytes, entry, host: host, user: entry.path[2], path: path) { perUser.append(token) }
            }
            let activeUser = own.first { $0.path == [host, "user"] }.flatMap { SimpleYAML.text(bytes, $0) }
            if let line = own.first(where: { $0.path == [host, "oauth_token"] }),
               let active = credential(bytes, line, host: host, user: activeUser, path: path) {
                if let same = perUser.firstIndex(where: { $0.user == activeUser && $0.secret == active.secret }) {
                    let stored = perUser.remove(at: same)
                    perUser.append(FoundCredential(
                        source: .gh, path: path, origin: active.origin, user: activeUser, secret: active.secret,
                        secretRanges: stored.secretRanges + active.secretRanges, removal: stored.removal + active.removal))
                } else {
                    perUser.append(active)
                }
            }
            found += perUser
            guard found.count <= ImportLimits.maximumEntries else {
                throw ImportError(.tooManyEntries, "\(path): more than \(ImportLimits.maximumEntries) accounts")
            }
        }
        return found
    }

    static func credential(_ bytes: UnsafeRawBufferPointer, _ entry: SimpleYAMLEntry, host: String, user: String?,
                           path: String) -> FoundCredential? {
        guard let value = entry.value, !value.isEmpty else { return nil }
        return FoundCredential(source: .gh, path: path, origin: .git(protocol: "https", host: host, path: nil), user: user,
                               secret: SimpleYAML.secret(bytes, value, quote: entry.quote),
                               secretRanges: [value], removal: [entry.line.full])
    }
}
