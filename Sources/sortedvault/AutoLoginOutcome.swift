import VaultAPI
import VaultCrypto
import CLICore

#if canImport(Glibc)
import Glibc
#endif

/// Prints an AutoLogin reply as `sortedvault session autologin` always has: the access token on
/// standard output (a newline after it only on a terminal), then exit 0 (valid, refreshed),
/// 8 (sign in again) or 9 (offline), with the reason on standard error.
enum AutoLoginOutcome {
    /// As `SessionClient.autoLogin` decoded it: valid and refreshed need a grant (an unknown
    /// outcome was refused as a malformed reply when it was decoded).
    static func report(_ reply: SessionInterface.LoginOutcome) throws(WireFailure) {
        let token = reply.grant?.accessToken
        let reason = reply.reason ?? ""
        switch reply.outcome {
        case .valid, .refreshed:
            guard let token else { throw .malformed("AutoLogin") }
            write(token)
        case .reauthRequired:
            // The daemon sends no grant with this outcome; AutoLoginResult.grant is nil for it.
            throw WireFailure(.reauthRequired, "sign in again: \(explanation(reason))")
        case .offline:
            if let token { write(token) }
            let cached = token == nil ? "no valid token is cached" : "the cached token is still valid"
            throw WireFailure(.offline, "offline: \(reason); \(cached); nothing was deleted")
        }
    }

    private static func write(_ token: SecureBytes) {
        StandardStreams.writeToStandardOutput(token)
        if isatty(1) == 1 {
            let newline: [UInt8] = [0x0A]
            newline.withUnsafeBytes { StandardStreams.writeAll(1, $0) }
        }
    }

    /// `ReauthReason.explanation`, by its wire name (an unknown name reads as noSession, as there).
    static func explanation(_ reason: String) -> String {
        switch reason {
        case "noRefreshToken": return "the access token expires and the provider gave no refresh token"
        case "refreshRejected": return "the provider no longer accepts this login (the refresh token was revoked, expired or reused)"
        case "refreshTokenExpired": return "the login's refresh token has expired"
        case "lifetimeOver": return "the login reached its maximum lifetime"
        case "rotationInDoubt": return "the provider's answer to a refresh was lost twice, so its refresh token may have changed; the login was ended"
        default: return "no login is stored for this app and account"
        }
    }
}
