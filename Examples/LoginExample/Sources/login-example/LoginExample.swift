import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import SortedVault

/// `login-example [--service NAME] [--account NAME] signin --issuer URL --client-id ID [--scope S] |
/// status | call URL | logout`: an app that signs in through the vault and uses the login it keeps.
/// It never sees a refresh token or the code's verifier: it asks the vault for an access token at
/// each call, and the vault refreshes it when it is about to expire.
///
/// Exit codes follow `sortedvault session autologin`: 0 done, 1 failed, 2 usage, 8 sign in again, 9 offline.
@main
struct LoginExample {
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        func option(_ name: String, default value: String) -> String {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
            let given = arguments[index + 1]
            arguments.removeSubrange(index...index + 1)
            return given
        }
        let service = option("--service", default: "org.sortedvault.login-example")
        let account = option("--account", default: ProcessInfo.processInfo.environment["USER"] ?? "me")
        let issuer = option("--issuer", default: "")
        let clientID = option("--client-id", default: "")
        let scope = option("--scope", default: "")
        do {
            let login = try SortedVault.login(service: service, account: account)
            switch (arguments.first, arguments.count) {
            case ("signin", 1): try await signIn(login, issuer: issuer, clientID: clientID, scope: scope)
            case ("status", 1): try await status(login)
            case ("call", 2): try await call(arguments[1], with: login)
            case ("logout", 1): try await logout(login)
            default:
                fail("usage: login-example [--service NAME] [--account NAME] signin --issuer URL --client-id ID [--scope S] | status | call URL | logout", 2)
            }
        } catch let error as SortedVaultError {
            switch error {
            case .signInAgain: fail(error.localizedDescription, 8)
            case .offline: fail(error.localizedDescription, 9)
            }
        } catch {
            fail(error.localizedDescription, 1)
        }
    }

    /// The browser sign-in through the vault: the loopback receiver waits for the browser, which
    /// `xdg-open` starts; the URL is printed too, for a browser elsewhere.
    static func signIn(_ login: VaultLogin, issuer: String, clientID: String, scope: String) async throws {
        guard let issuerURL = URL(string: issuer), !clientID.isEmpty else { fail("signin needs --issuer URL and --client-id ID", 2) }
        let provider = ProviderSettings(kind: .oidc, clientID: clientID, issuer: issuerURL)
        let status = try await login.signIn(provider: provider, scopes: scope.isEmpty ? [] : [scope], opener: .loopback { page in
            FileHandle.standardError.write(Data("Open this URL in a browser to sign in:\n\n  \(page.absoluteString)\n\n".utf8))
            SignInOpener.xdgOpen(page)
        })
        print("signed in as \(login.key.account) (user \(status.userID ?? "unknown"))")
    }

    static func status(_ login: VaultLogin) async throws {
        guard let status = try await login.status() else {
            fail("not signed in to \(login.key.service) as \(login.key.account): sign in, then try again", 8)
        }
        print("signed in as \(login.key.account) (user \(status.userID ?? "unknown")): \(status.state), the token expires \(status.accessTokenExpiresAt)")
    }

    /// A GET with the vault's token: valid for at least a minute, refreshed silently when it was not.
    static func call(_ address: String, with login: VaultLogin) async throws {
        guard let url = URL(string: address), url.scheme == "https" || (url.scheme == "http" && url.host == "127.0.0.1") else {
            fail("call takes an https URL (or http to 127.0.0.1)", 2)
        }
        var request = URLRequest(url: url)
        request.setValue("Bearer \(try await login.accessToken(minValid: 60))", forHTTPHeaderField: "Authorization")
        let (body, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { fail("\(url) answered HTTP \(status)", 1) }
        FileHandle.standardOutput.write(body + Data("\n".utf8))
    }

    static func logout(_ login: VaultLogin) async throws {
        let result = try await login.logout()
        print(result.wasLoggedIn ? "logged out\(result.revoked ? "; the provider revoked the tokens" : "")" : "was not signed in")
    }

    static func fail(_ message: String, _ code: Int32) -> Never {
        FileHandle.standardError.write(Data("login-example: \(message)\n".utf8))
        exit(code)
    }
}
