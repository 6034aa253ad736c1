/// A value that is the `parameters` of a message: written in one place, read in one place.
public protocol WireEncodable: Sendable {
    /// Writes the members of the `parameters` object (the object itself is opened and closed by the caller).
    func encodeMembers(to writer: inout WireWriter)
}

public protocol WireDecodable: Sendable {
    /// Reads and validates the `parameters`; throws ``WireParameterError`` naming the parameter.
    init(from parameters: WireParameters) throws(WireParameterError)
}

public typealias WireCodable = WireEncodable & WireDecodable

/// One method of an interface: its fully qualified name, its request and its reply type, and
/// which of their members are secrets (base64 on the wire, `SecureBytes` here).
///
/// ```swift
/// let frame = VarlinkWire.encodeCall(Vault.Retrieve.self, .init(service: "github", account: "ada"))
/// // … send, receive `replyFrame` …
/// switch try VarlinkWire.decodeReply(Vault.Retrieve.self, frame: replyFrame) {
/// case .reply(let reply, _): use(reply.secret)
/// case .error(let name, let parameters): throw MyError(name, parameters)
/// }
/// ```
public protocol VarlinkMethod {
    associatedtype Request: WireCodable
    associatedtype Reply: WireCodable
    /// The fully qualified method name, e.g. `org.sortedvault.vault.Retrieve`.
    static var name: String { get }
    /// Secret members of the request, by dotted path below `parameters`, with their decoded size limit.
    static var requestSecrets: SecretLimits { get }
    /// Secret members of the reply.
    static var replySecrets: SecretLimits { get }
}

extension VarlinkMethod {
    public static var requestSecrets: SecretLimits { .none }
    public static var replySecrets: SecretLimits { .none }
    /// The part of ``name`` after the interface, e.g. `Retrieve`.
    public static var member: Substring { name[name.index(after: name.lastIndex(of: ".")!)...] }
}

/// An empty `parameters` object, as request or reply.
public struct NoParameters: WireCodable, Equatable {
    public init() {}
    public init(from parameters: WireParameters) {}
    public func encodeMembers(to writer: inout WireWriter) {}
}

/// The size limits of secrets on the wire, the same as the vault's own.
public enum WireLimits {
    /// An item's secret: 512 KiB decoded (Limits.maximumSecretBytes in VaultCore).
    public static let secretBytes = 512 * 1024
    /// A passphrase: 4096 bytes.
    public static let passphraseBytes = 4096
    /// A provider's client secret or API key: 4096 bytes.
    public static let providerSecretBytes = 4096
    /// An access token in a reply, or an ID token in a token response: 64 KiB (a large JWT is a few KiB).
    public static let tokenBytes = 64 * 1024
    /// Any other token in a token response (access, refresh): 16 KiB (TokenResponse.maximumTokenBytes).
    public static let responseTokenBytes = 16 * 1024
    /// The query of a sign-in's redirect (code, state, iss…): 8 KiB, far above what providers send.
    public static let callbackQueryBytes = 8 * 1024
    /// A password a sign-in sends to the provider: 4096 bytes, as a passphrase.
    public static let passwordBytes = 4096
}
