import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultSession

/// Why ``VaultLogin/accessToken(minValid:)`` has no token to give: the two things an app shows a
/// screen for. Anything else (no daemon, a locked vault, a refused caller) is a `VaultError`.
///
/// ```swift
/// do { token = try await login.accessToken() }
/// catch SortedVaultError.signInAgain { showSignIn() }
/// catch SortedVaultError.offline { showOffline() }
/// ```
public enum SortedVaultError: Error, Sendable, Equatable, LocalizedError, CustomStringConvertible {
    /// The user must sign in again; the reason says why (never saved, logged out, refused by the provider, over its lifetime).
    case signInAgain(ReauthReason)
    /// The provider cannot be reached and no cached token stays valid long enough; nothing was
    /// deleted, so asking again once it answers works.
    case offline(reason: String)

    public var description: String {
        switch self {
        case .signInAgain(let reason): return "sign in again: \(reason.explanation)"
        case .offline(let reason): return "offline: \(reason); no cached token stays valid long enough, try again once the provider answers"
        }
    }

    public var errorDescription: String? { description }
}
