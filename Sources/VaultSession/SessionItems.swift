import Foundation
import VaultCore

/// Where logins live in the `TokenStore`: one item per login, in a service namespace that the
/// vault's item API refuses to clients (``ItemKey/reservedServicePrefix``), so the raw record —
/// refresh token and client secret included — is reachable only through the session API.
public enum SessionItems {
    public static let sessionPrefix = ItemKey.reservedServicePrefix + "session/"
    public static let revocationService = ItemKey.reservedServicePrefix + "revocation"

    /// The item that holds the login of `key`.
    static func item(for key: ItemKey) throws -> ItemKey {
        let limit = Limits.maximumNameBytes - sessionPrefix.utf8.count
        guard key.service.utf8.count <= limit else {
            throw VaultError.invalidArgument("a session's service name may be at most \(limit) bytes")
        }
        return try ItemKey(service: sessionPrefix + key.service, account: key.account)
    }

    /// The login key of a session item, or nil for any other item.
    static func login(of item: ItemKey) -> ItemKey? {
        guard item.service.hasPrefix(sessionPrefix) else { return nil }
        return try? ItemKey(service: String(item.service.dropFirst(sessionPrefix.count)), account: item.account)
    }
}
