import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// A git host bound to a persistent login: `sortedvault git bind https://git.example.com SERVICE ACCOUNT`.
///
/// Stored as one item so it lives, locks and is listed with the rest of the vault: service
/// `git-login:PROTOCOL://HOST`, account = the user name git sends (default `oauth2`, what most hosts
/// expect beside a token), attributes `session.service` and `session.account` naming the login. Its
/// secret is a fixed marker: the token itself stays in the login and is fetched fresh at every `get`.
public struct GitLoginBinding: Sendable, Equatable {
    public static let servicePrefix = "git-login:"
    static let marker = Array("sortedvault git login binding".utf8)

    public var origin: String
    public var username: String
    public var login: ItemKey

    public init(origin: String, username: String, login: ItemKey) {
        self.origin = origin
        self.username = username
        self.login = login
    }

    /// `https://host[:port]` from what the user typed, refusing anything with a path, user or password.
    public static func origin(fromURL text: String) throws -> String {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              let host = components.host, !host.isEmpty else {
            throw GitCredentialError("\(text.debugDescription) is not a URL like https://git.example.com")
        }
        guard components.user == nil, components.password == nil else {
            throw GitCredentialError("leave the user name and password out of the URL: give --username instead")
        }
        guard components.path.isEmpty || components.path == "/", components.query == nil else {
            throw GitCredentialError("bind a host, not a path: https://\(host)")
        }
        let origin = "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
        _ = try GitCredentialMessage.checkedText(Array(origin.utf8)[...], field: "the URL")
        try checkTransport(origin)
        return origin
    }

    /// git sends the bound login's access token as its password: only over https, or over plain
    /// http to this machine (127.0.0.0/8, ::1, localhost), where it never crosses a network.
    public static func checkTransport(_ origin: String) throws {
        guard let separator = origin.firstRange(of: "://") else { throw GitCredentialError("\(origin.debugDescription) is not a URL like https://git.example.com") }
        let scheme = origin[..<separator.lowerBound].lowercased()
        if scheme == "https" { return }
        var host = String(origin[separator.upperBound...])
        if host.hasPrefix("[") {
            host = String(host.dropFirst().prefix { $0 != "]" })
        } else if let colon = host.lastIndex(of: ":") {
            host = String(host[..<colon])
        }
        guard scheme == "http" else {
            throw GitCredentialError("a login's token goes only to https hosts, not \(scheme): bind https://\(host)")
        }
        guard isLoopback(host) else {
            throw GitCredentialError("refusing to send a login's access token in clear over http to \(host): bind https://\(host) (plain http is allowed only to this machine, 127.0.0.1 or ::1)")
        }
    }

    static func isLoopback(_ host: String) -> Bool {
        let lower = host.lowercased()
        if lower == "localhost" || lower == "::1" { return true }
        let parts = lower.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { part in UInt8(part).map { String($0) == part } ?? false }
    }

    /// Stores the binding, replacing any other binding of the same host.
    public func save(in store: any TokenStore) async throws {
        let service = Self.servicePrefix + origin
        let options = try StoreOptions(label: "git login binding for \(origin)",
                                       attributes: ["session.service": login.service, "session.account": login.account])
        try await store.store(SecureBytes(copying: Self.marker), for: try ItemKey(service: service, account: username), options: options)
        for old in try await store.list(service: service) where old.service == service && old.account != username {
            try await store.delete(old.key)
        }
    }

    /// Removes the host's binding; false when there was none.
    public static func remove(origin: String, from store: any TokenStore) async throws -> Bool {
        let service = servicePrefix + origin
        let items = try await store.list(service: service).filter { $0.service == service }
        for item in items { try await store.delete(item.key) }
        return !items.isEmpty
    }

    /// The binding of `origin` (`PROTOCOL://HOST`), if any.
    public static func find(origin: String, in store: any TokenStore) async throws -> GitLoginBinding? {
        let service = servicePrefix + origin
        guard let item = try await store.list(service: service).filter({ $0.service == service })
            .max(by: { $0.modifiedAt < $1.modifiedAt }) else { return nil }
        guard let loginService = item.attributes["session.service"], let loginAccount = item.attributes["session.account"] else {
            throw GitCredentialError("the binding of \(origin) is damaged (no session.service/session.account): bind it again with `sortedvault git bind`")
        }
        return GitLoginBinding(origin: origin, username: item.account, login: try ItemKey(service: loginService, account: loginAccount))
    }
}
