/// The lines `sortedvault status` prints, word for word the same from the lean front and from
/// `sortedvault-cli`.
public enum StatusReport {
    public static func lines(locked: Bool, items: Int, logins: Int?, queuedRevocations: Int?, keySources: [String],
                             autoLockMinutes: Int, version: String, socket: String, pid: Int? = nil, uptimeSeconds: Int? = nil,
                             policyFiles: [String]? = nil, policyError: String? = nil, accessLogFailedWrites: Int? = nil) -> [String] {
        var lines = ["vault: \(locked ? "locked" : "unlocked")",
                     "items: \(items)\(logins == nil ? " (stored records; the vault is locked)" : "")"]
        if let logins { lines.append("logins: \(logins)") }
        if let queuedRevocations { lines.append("queued revocations: \(queuedRevocations)") }
        lines.append("key sources: \(keySources.joined(separator: ", "))")
        lines.append("auto-lock: \(autoLockMinutes == 0 ? "off" : "after \(autoLockMinutes) idle minutes")")
        var daemon = "daemon: sortedvault \(version) at \(socket)"
        if let pid { daemon += ", pid \(pid)" }
        if let uptimeSeconds { daemon += ", up " + duration(uptimeSeconds) }
        lines.append(daemon)
        if let policyFiles { lines.append("policy: " + policyFiles.joined(separator: ", ")) }
        if let policyError { lines.append("policy reload failed, the policy above stays: " + policyError) }
        if let accessLogFailedWrites, accessLogFailedWrites > 0 {
            lines.append("access log: \(accessLogFailedWrites) lines could not be written (the disk was full, or calls came faster than the log could take them)")
        }
        return lines
    }

    /// `59s`, `12m 5s`, `3h 2m`, `4d 1h`.
    static func duration(_ seconds: Int) -> String {
        let (days, hours, minutes) = (seconds / 86_400, seconds / 3600 % 24, seconds / 60 % 60)
        if days > 0 { return "\(days)d \(hours)h" }
        if hours > 0 { return "\(hours)h \(minutes)m" }
        if minutes > 0 { return "\(minutes)m \(seconds % 60)s" }
        return "\(seconds)s"
    }
}
