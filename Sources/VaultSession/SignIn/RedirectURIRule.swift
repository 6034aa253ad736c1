import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// The one rule for where a sign-in's authorization code may be sent back to.
///
/// ```swift
/// try RedirectURIRule.check(request.redirectURI, flow: request.flow)   // throws VaultError.invalidArgument
/// ```
///
/// Browser and paste sign-ins follow ``SecureEndpoint``'s rule (https, or http to a loopback
/// address): the code crosses the network or reaches a listener of ours. An app's own web view
/// (``SignInFlow/app``) may also catch a private-use scheme it registered, named after a domain it
/// controls in reverse order (RFC 8252 §7.1: `com.example.app:/oauth2redirect`). A scheme with no
/// period is refused, so `javascript:`, `data:`, `file:` and the like never receive a code; a
/// fragment or user info is refused everywhere (the code must come back in the query, to the app).
public enum RedirectURIRule {
    public static func check(_ url: URL, flow: SignInFlow) throws {
        guard flow == .app, let scheme = url.scheme?.lowercased(), scheme != "http", scheme != "https" else {
            return try SecureEndpoint.check(url, what: "redirect URI")
        }
        guard isPrivateUse(scheme) else {
            throw VaultError.invalidArgument("""
                the redirect URI must be https, http to a loopback address, or a private-use scheme named after a domain \
                the app controls in reverse order (RFC 8252 §7.1: com.example.app:/oauth2redirect)
                """)
        }
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
              components.user == nil, components.password == nil, components.fragment == nil else {
            throw VaultError.invalidArgument("the redirect URI must not carry user info or a fragment")
        }
        guard url.absoluteString.utf8.count <= SecureEndpoint.maximumBytes else {
            throw VaultError.invalidArgument("the redirect URI is longer than \(SecureEndpoint.maximumBytes) bytes")
        }
    }

    /// A reverse domain name as a URI scheme (RFC 3986 §3.1: starting with a letter; letters,
    /// digits, `+`, `-`): at least two labels, none empty.
    static func isPrivateUse(_ scheme: String) -> Bool {
        let labels = scheme.split(separator: ".", omittingEmptySubsequences: false)
        guard let first = scheme.unicodeScalars.first, ("a"..."z").contains(first), labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "+" }
        }
    }
}
