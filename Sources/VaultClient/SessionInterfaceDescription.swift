import VaultAPI

/// The varlink interface description of `org.sortedvault.session`, served by the daemon:
/// `interfaces/org.sortedvault.session.varlink` itself, embedded at build time (see
/// ``VaultInterfaceDescription``).
public enum SessionInterfaceDescription {
    public static let name = SessionInterface.name
    public static let text = String(decoding: SessionInterface.file, as: UTF8.self)
}
