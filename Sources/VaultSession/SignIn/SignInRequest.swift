import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// How the authorization comes back to the vault.
public enum SignInFlow: String, Sendable, CaseIterable {
    /// The provider redirects the browser to a listener of the caller's on a loopback address.
    case browser
    /// The user copies the redirect URL from a browser (maybe on another machine) back to the caller.
    case paste
    /// An app's own web view catches the redirect: to a claimed https URI, a loopback one, or a
    /// private-use scheme the app registered (RFC 8252 §7.1, ``RedirectURIRule``).
    case app
    /// RFC 8628: the user enters a code at the provider's page (on any device); the manager polls.
    case device
}

/// A sign-in to begin: where to store it, which provider, how the answer comes back.
///
/// ```swift
/// let start = try await sessions.beginSignIn(SignInRequest(service: "com.sorted.api", account: nil,
///     settings: settings, flow: .browser, redirectURI: listener.url, scopes: ["read"]), owner: uid)
/// ```
public struct SignInRequest: Sendable {
    /// The longest a sign-in may wait for its callback, in seconds.
    public static let maximumLifetime: TimeInterval = 3600
    public static let defaultLifetime: TimeInterval = 300

    public var service: String
    /// Where the login is stored; nil: the verified id token's subject (oidc only).
    public var account: String?
    public var settings: ProviderSettings
    public var flow: SignInFlow
    public var redirectURI: URL
    public var scopes: [String]
    /// How long the sign-in waits for its callback.
    public var lifetime: TimeInterval

    public init(service: String, account: String?, settings: ProviderSettings, flow: SignInFlow, redirectURI: URL,
                scopes: [String], lifetime: TimeInterval = SignInRequest.defaultLifetime) {
        self.service = service
        self.account = account
        self.settings = settings
        self.flow = flow
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.lifetime = lifetime
    }
}

/// A sign-in under way, as its caller sees it: never its state's twin, the verifier, or the nonce's
/// secret use (the URL carries the state and nonce the provider must see, and the S256 challenge).
public struct SignInStart: Sendable, Equatable {
    /// Names the sign-in in CompleteLogin and CancelLogin (only its owner's calls find it).
    public let flowID: String
    /// The URL to open in a browser: a device sign-in's verification page (with the code when the
    /// provider offers that).
    public let authorizationURL: URL
    public let expiresAt: Date
    /// What the user needs for a device sign-in; nil for browser and paste.
    public var device: DeviceCode? = nil

    public init(flowID: String, authorizationURL: URL, expiresAt: Date, device: DeviceCode? = nil) {
        self.flowID = flowID
        self.authorizationURL = authorizationURL
        self.expiresAt = expiresAt
        self.device = device
    }
}

/// A device sign-in as the user sees it (RFC 8628 §3.2): enter ``userCode`` at
/// ``verificationURI``, or open ``verificationURIComplete``.
public struct DeviceCode: Sendable, Equatable {
    public let userCode: String
    public let verificationURI: URL
    public let verificationURIComplete: URL?
    /// Seconds between the manager's polls, as the provider asked.
    public let interval: TimeInterval

    public init(userCode: String, verificationURI: URL, verificationURIComplete: URL?, interval: TimeInterval) {
        self.userCode = userCode
        self.verificationURI = verificationURI
        self.verificationURIComplete = verificationURIComplete
        self.interval = interval
    }
}

/// A completed sign-in: where the login was stored, and its state.
public struct SignInResult: Sendable {
    public let key: ItemKey
    public let status: SessionStatus

    public init(key: ItemKey, status: SessionStatus) {
        self.key = key
        self.status = status
    }
}
