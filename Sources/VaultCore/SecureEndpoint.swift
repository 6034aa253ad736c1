import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The one rule for every URL the vault sends a request to (OAuth2 token and revocation endpoints,
/// an OpenID Connect issuer, its discovery document and its key set): `https` anywhere, plain
/// `http` only to a literal loopback address (a provider on this machine), no user info, no fragment.
///
/// ```swift
/// try SecureEndpoint.check(url, what: "token endpoint")   // throws VaultError.invalidArgument
/// ```
///
/// Do not add exceptions at call sites: one rule, checked the same way everywhere, is what lets the
/// documentation promise that tokens never cross the network in clear text.
public enum SecureEndpoint {
    /// The longest endpoint URL accepted, in UTF-8 bytes.
    public static let maximumBytes = 2048

    /// Throws ``VaultError/invalidArgument(_:)`` naming `what` when `url` breaks the rule.
    public static func check(_ url: URL, what: String) throws {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = components.scheme?.lowercased(), let host = components.host, !host.isEmpty else {
            throw VaultError.invalidArgument("the \(what) must be an absolute https URL")
        }
        guard components.user == nil, components.password == nil, components.fragment == nil else {
            throw VaultError.invalidArgument("the \(what) must not carry user info or a fragment")
        }
        guard url.absoluteString.utf8.count <= maximumBytes else {
            throw VaultError.invalidArgument("the \(what) is longer than \(maximumBytes) bytes")
        }
        switch scheme {
        case "https": return
        case "http" where isLoopback(host): return
        default:
            throw VaultError.invalidArgument("the \(what) must use https (plain http is allowed only to a loopback address)")
        }
    }

    /// `localhost`, `::1`, or an IPv4 literal in 127.0.0.0/8. "127.evil.example" is a DNS name
    /// anyone can point anywhere, so only a literal of four decimal octets counts.
    static func isLoopback(_ host: String) -> Bool {
        let octets = host.split(separator: ".", omittingEmptySubsequences: false)
        let loopbackIPv4 = octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
        return ["localhost", "::1", "[::1]"].contains(host.lowercased()) || loopbackIPv4
    }
}
