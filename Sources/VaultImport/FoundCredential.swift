import VaultCrypto

/// One credential found in a tool's file: where it is, what it opens, and the secret itself.
///
/// ```swift
/// for found in try NetrcFile.parse(bytes, path: "/home/ada/.netrc") {
///     print(found)   // netrc /home/ada/.netrc: git.example.com, user ada (secret redacted)
/// }
/// ```
///
/// The secret is in secure memory and never in `description`. ``secretRanges`` and ``removal`` are
/// byte offsets in the file as it was read: do not apply them to a file that has changed since.
public struct FoundCredential: Sendable, CustomStringConvertible {
    public let source: ImportSource
    /// The file it was read from.
    public let path: String
    /// What the credential opens, in the terms the vault's naming needs.
    public let origin: CredentialOrigin
    /// The user name the file gives, if any.
    public let user: String?
    /// The secret, decoded (percent-, base64- or JSON-decoded as its format requires).
    public let secret: SecureBytes
    /// Where the secret's bytes lie in the file, as written there (still encoded).
    public let secretRanges: [Range<Int>]
    /// The bytes ``SourceRewriter`` drops for this credential: the line, the JSON member with its
    /// comma, the netrc `password` token. They cover every range in ``secretRanges``.
    public let removal: [Range<Int>]

    init(source: ImportSource, path: String, origin: CredentialOrigin, user: String?, secret: SecureBytes,
         secretRanges: [Range<Int>], removal: [Range<Int>]) {
        self.source = source
        self.path = path
        self.origin = origin
        self.user = user
        self.secret = secret
        self.secretRanges = secretRanges
        self.removal = removal
    }

    public var description: String {
        "\(source) \(path): \(origin)" + (user.map { ", user \($0)" } ?? "") + " (secret redacted)"
    }
}

/// What a found credential opens: the facts ``ImportNaming`` turns into the vault's names.
public enum CredentialOrigin: Sendable, Equatable, CustomStringConvertible {
    /// A git remote: `protocol://host[/path]` as git's credential protocol says it.
    case git(protocol: String, host: String, path: String?)
    /// A docker registry, by the server URL docker keys it under (`https://index.docker.io/v1/`, `ghcr.io`).
    case dockerRegistry(serverURL: String, identityToken: Bool)
    /// A Python package index, by the upload URL twine uses (`https://upload.pypi.org/legacy/`).
    case pythonRepository(url: String)
    /// An npm registry, by npm's "nerf dart" (`//registry.npmjs.org/`) and the field (`_authToken`).
    case npmRegistry(uri: String, field: String)
    /// A secret no helper asks for by name (netrc's `default`, pypirc's `server-login`): found,
    /// reported, but given no vault name.
    case unnamed(String)

    public var description: String {
        switch self {
        case .git(let scheme, let host, let path): "\(scheme)://\(host)" + (path.map { "/\($0)" } ?? "")
        case .dockerRegistry(let url, let token): url + (token ? " (identity token)" : "")
        case .pythonRepository(let url): url
        case .npmRegistry(let uri, let field): "\(uri):\(field)"
        case .unnamed(let what): what
        }
    }
}
