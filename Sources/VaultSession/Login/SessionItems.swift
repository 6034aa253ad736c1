import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// Where logins live in the `TokenStore`: one item per login, in a service namespace that the
/// vault's item API refuses to clients (``ItemKey/reservedServicePrefix``), so the raw record —
/// refresh token and client secret included — is reachable only through the session API.
public enum SessionItems {
    public static let sessionPrefix = ItemKey.reservedServicePrefix + "session/"
    public static let revocationService = LocalRevocationOutbox.service

    /// The item that holds the login of `key`.
    static func item(for key: ItemKey) throws -> ItemKey {
        let limit = Limits.maximumNameBytes - sessionPrefix.utf8.count
        guard key.service.utf8.count <= limit else {
            throw VaultError.invalidArgument("a session's service name may be at most \(limit) bytes")
        }
        return try ItemKey(service: sessionPrefix + key.service, account: key.account)
    }

    /// The login key of a session item, or nil for any other item.
    /// By bytes, as every name comparison: the prefix is ASCII, so what follows it is whole UTF-8.
    public static func login(of item: ItemKey) -> ItemKey? {
        guard item.service.utf8.starts(with: sessionPrefix.utf8) else { return nil }
        let service = String(decoding: item.service.utf8.dropFirst(sessionPrefix.utf8.count), as: UTF8.self)
        return try? ItemKey(storedService: service, account: item.account)
    }
}
