/// An error an interface declares (`error NotFound (service: string, account: string)`): its
/// fully qualified name and its parameters, which a server writes as an error reply and a client
/// reads back. The types are generated from the interface files.
///
/// ```swift
/// let reply = VaultInterface.NotFound(service: "github", account: "ada")   // VaultInterface.NotFound.name
/// ```
public protocol InterfaceError: Error, WireCodable {
    /// The fully qualified error name, e.g. `org.sortedvault.vault.NotFound`.
    static var name: String { get }
}
