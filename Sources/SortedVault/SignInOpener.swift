import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultLoopback

/// How ``VaultLogin/signIn(provider:scopes:timeout:opener:)`` shows the provider's page and gets
/// the browser's answer back.
///
/// ```swift
/// try await login.signIn(provider: settings)                       // the loopback receiver and xdg-open
/// try await login.signIn(provider: settings, opener: .custom(redirectURI: registered) { url, redirect in
///     try await webView.load(url, until: redirect)                 // the URL the provider redirected to
/// })
/// ```
///
/// Do not parse the callback yourself or keep it: it carries the authorization code (useless without
/// the verifier the vault keeps, but still the user's sign-in).
public struct SignInOpener: Sendable {
    enum Kind: Sendable {
        case loopback(port: UInt16, localhost: Bool, show: @Sendable (URL) -> Void)
        case custom(redirectURI: URL, open: @Sendable (URL, URL) async throws -> URL)
    }

    let kind: Kind

    /// The loopback receiver (RFC 8252 §7.3): listens on 127.0.0.1 only, on `port` (0: an ephemeral
    /// one) at a random path, answers only that path, ignores an answer with another sign-in's state
    /// and keeps waiting, and closes when the sign-in ends. `localhost`: the redirect URI names
    /// `localhost` (as some providers register it) and ::1 is listened on too. `show` opens the
    /// provider's page: `xdg-open` unless given (give one that also prints the URL for a user on
    /// another machine).
    public static func loopback(port: UInt16 = 0, localhost: Bool = false,
                                show: @escaping @Sendable (URL) -> Void = SignInOpener.xdgOpen) -> SignInOpener {
        SignInOpener(kind: .loopback(port: port, localhost: localhost, show: show))
    }

    /// An app's own web view (the shape of supabase-swift's `launchFlow`): `open(authorizationURL,
    /// redirectURI)` shows the page and returns the URL the provider redirected to, with its query.
    /// `redirectURI` is the one registered with the provider: https, http to a loopback address, or
    /// the app's private-use scheme named after a domain it controls (RFC 8252 §7.1:
    /// `com.example.app:/oauth2redirect`; a scheme with no period is refused). `open` must end when
    /// its task is cancelled: the sign-in's timeout and the caller's cancellation wait for it.
    public static func custom(redirectURI: URL,
                              _ open: @escaping @Sendable (_ authorizationURL: URL, _ redirectURI: URL) async throws -> URL) -> SignInOpener {
        SignInOpener(kind: .custom(redirectURI: redirectURI, open: open))
    }

    /// Opens the URL in the user's browser with `xdg-open`, through a private page (0600, in
    /// `$XDG_RUNTIME_DIR`) that leads to it: a command line is readable by every local user, and
    /// the URL carries the sign-in's state, PKCE challenge and nonce. ``VaultLogin/signIn(provider:scopes:timeout:opener:)``
    /// removes the page when the sign-in ends. When no private page can be made, nothing is started.
    public static let xdgOpen: @Sendable (URL) -> Void = { _ = try? SystemBrowser.open($0) }
}
