import BoundedJSON

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

extension InterfaceError {
    /// The error reply's `parameters`, written by the type's one encoder. Error parameters never
    /// hold secrets (no interface marks one `@secret`), so they may become `JSONValue`s.
    public var parameters: [String: JSONValue] {
        var writer = WireWriter()
        writer.beginObject()
        encodeMembers(to: &writer)
        writer.endObject()
        let bytes = writer.finish()
        // What WireWriter wrote is a JSON object: the parse cannot fail.
        return bytes.withUnsafeBytes { (try? JSONValue.parse($0))?.objectValue ?? [:] }
    }

    /// The error of type `Self` from a reply's parameters; nil when they do not have its shape.
    public static func decode(_ parameters: [String: JSONValue]) -> Self? {
        try? Self(from: WireParameters(parameters))
    }
}
