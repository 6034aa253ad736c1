/// The lines `sortedvault status` prints, word for word the same from the lean front and from
/// `sortedvault-cli`.
public enum StatusReport {
    public static func lines(locked: Bool, items: Int, logins: Int?, queuedRevocations: Int?, keySources: [String],
                             autoLockMinutes: Int, version: String, socket: String) -> [String] {
        var lines = ["vault: \(locked ? "locked" : "unlocked")",
                     "items: \(items)\(logins == nil ? " (stored records; the vault is locked)" : "")"]
        if let logins { lines.append("logins: \(logins)") }
        if let queuedRevocations { lines.append("queued revocations: \(queuedRevocations)") }
        lines.append("key sources: \(keySources.joined(separator: ", "))")
        lines.append("auto-lock: \(autoLockMinutes == 0 ? "off" : "after \(autoLockMinutes) idle minutes")")
        lines.append("daemon: sortedvault \(version) at \(socket)")
        return lines
    }
}
