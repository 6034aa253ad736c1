import VaultAPI

/// The varlink interface description of `org.sortedvault.vault`: the API contract, served by the
/// daemon. It is `interfaces/org.sortedvault.vault.varlink` itself, embedded at build time by the
/// GenerateInterfaceCode plugin (into `VaultInterface.file`); there is no other copy.
public enum VaultInterfaceDescription {
    public static let name = VaultInterface.name
    public static let text = String(decoding: VaultInterface.file, as: UTF8.self)
}
