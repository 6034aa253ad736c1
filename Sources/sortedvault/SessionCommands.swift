import ArgumentParser
import BoundedJSON
import Foundation
import SortedVaultCLI
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Keep an OAuth2 login alive: save it once, then autologin at every start.",
        discussion: """
            autologin and refresh print the access token on standard output and exit with
            0 (valid or refreshed), 8 (sign in again: the reason is on standard error) or
            9 (the provider is offline: the cached token is printed only while it is still valid).
            """,
        subcommands: [SessionSave.self, SessionAutoLogin.self, SessionRefresh.self, SessionLogout.self,
                      SessionStatusCommand.self, SessionListCommand.self, SessionWatch.self])
}

/// SERVICE ACCOUNT, shared by the session commands.
struct SessionKeyArguments: ParsableArguments {
    @Argument(help: "The app's service, e.g. com.sorted.api.") var service: String
    @Argument(help: "The account, e.g. the user's e-mail or id.") var account: String

    func key() throws -> ItemKey { try ItemKey(service: service, account: account) }
}

struct SessionSave: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Store a login from the provider's token response (JSON on standard input).",
        discussion: """
            Pipe the JSON the provider answered at sign-in (access_token, token_type, expires_in,
            refresh_token, scope, id_token). A client secret is read from --client-secret-fd, never
            from the command line.
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments
    @Option(help: "The provider's token endpoint (https, or http to a loopback address).") var tokenEndpoint: String
    @Option(help: "The provider's RFC 7009 revocation endpoint, used at logout.") var revocationEndpoint: String?
    @Option(help: "The OAuth2 client id.") var clientId: String
    @Option(help: "Read the client secret (first line) from this file descriptor; omit for a public client.") var clientSecretFd: Int32?
    @Option(help: "How the client authenticates: basic (default) or post.") var clientAuth: String = "basic"
    @Option(help: "End the login this many seconds after sign-in, whatever its tokens say.") var maxLifetime: Int?

    func run() async throws {
        try await reportingErrors {
            let key = try login.key()
            guard let authentication = OAuthProvider.ClientAuthentication(rawValue: clientAuth) else {
                throw VaultError.invalidArgument("--client-auth takes basic or post")
            }
            guard let token = URL(string: tokenEndpoint) else { throw VaultError.invalidArgument("--token-endpoint is not a URL") }
            let revocation = try revocationEndpoint.map { text -> URL in
                guard let url = URL(string: text) else { throw VaultError.invalidArgument("--revocation-endpoint is not a URL") }
                return url
            }
            let secret = try clientSecretFd.map { try SecretInput.passphrase(fd: $0, prompt: "") }
            let provider = try OAuthProvider(tokenEndpoint: token, revocationEndpoint: revocation, clientID: clientId,
                                             clientSecret: secret, clientAuthentication: authentication)
            let input = try SecretInput.readAll(fd: 0, limit: TokenResponse.maximumBytes, what: "the token response")
            let object = try input.withUnsafeBytes { raw -> [String: JSONValue] in
                guard case .object(let object)? = try? JSONValue.parse(raw, maxDepth: 8) else {
                    throw VaultError.invalidArgument("standard input is not a JSON object: pipe the provider's token response unchanged")
                }
                return object
            }
            _ = try TokenResponse(object: object)  // a clear error here, before the daemon sees it
            let session = try await global.sessionClient().save(tokenResponse: object, provider: provider, for: key,
                                                                 maximumLifetime: maxLifetime)
            let expires = session["accessTokenExpiresAt"]?.doubleValue.map { Date(timeIntervalSince1970: $0) }
            print("saved the login for \(key.service)/\(key.account); the access token expires \(expires.map { "\($0)" } ?? "at an unknown time")")
        }
    }
}

struct SessionAutoLogin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "autologin",
        abstract: "Print a valid access token, refreshing it when needed (exit 8: sign in again, 9: offline).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments

    func run() async throws {
        try await reportingErrors {
            try printOutcome(try await global.sessionClient().autoLogin(try login.key()))
        }
    }
}

struct SessionRefresh: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Refresh now and print the new access token (exit 8: sign in again, 9: offline).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments

    func run() async throws {
        try await reportingErrors {
            try printOutcome(try await global.sessionClient().refresh(try login.key()))
        }
    }
}

/// Writes the token (if any) to stdout and exits with the outcome's code.
private func printOutcome(_ result: AutoLoginResult) throws {
    if let grant = result.grant {
        SecretInput.writeToStandardOutput(grant.accessToken)
        if isatty(1) == 1 { print() }
    }
    switch result {
    case .valid, .refreshed:
        return
    case .reauthRequired(let reason):
        throw fail("sign in again: \(reason.explanation)", .reauthRequired)
    case .offline(let grant, let reason):
        let token = grant == nil ? "no valid token is cached" : "the cached token is still valid"
        throw fail("offline: \(reason); \(token); nothing was deleted", .offline)
    }
}

struct SessionLogout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Wipe the login and revoke its tokens at the provider (queued when offline).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments

    func run() async throws {
        try await reportingErrors {
            let result = try await global.sessionClient().logout(try login.key())
            if !result.wasLoggedIn {
                print("no login was stored; nothing to do")
            } else if result.revoked {
                print("logged out; the provider revoked the tokens")
            } else if result.revocationQueued {
                print("logged out here; the provider is unreachable, so the revocation is queued and retried by the daemon")
            } else {
                print("logged out; no revocation endpoint is configured, so the tokens stay valid at the provider until they expire")
            }
        }
    }
}

struct SessionStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show a login's state (never its tokens).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        try await reportingErrors {
            let session = try await global.sessionClient().status(try login.key())
            if json {
                print(String(decoding: JSONValue.object(session).serialized(), as: UTF8.self))
                return
            }
            func date(_ field: String) -> String {
                session[field]?.doubleValue.map { "\(Date(timeIntervalSince1970: $0))" } ?? "—"
            }
            print("state: \(session["state"]?.stringValue ?? "?")")
            print("access token expires: \(date("accessTokenExpiresAt"))")
            print("refresh token: \(session["hasRefreshToken"]?.boolValue == true ? "yes, expires \(date("refreshTokenExpiresAt"))" : "none")")
            print("signed in: \(date("signedInAt")); last refreshed: \(date("lastRefreshedAt")); login ends: \(date("absoluteExpiresAt"))")
            print("scopes: \(session["scopes"]?.arrayValue?.compactMap(\.stringValue).joined(separator: " ") ?? "")")
            print("user: \(session["userId"]?.stringValue ?? "—")")
            print("provider: \(session["tokenEndpoint"]?.stringValue ?? "?") (client \(session["clientId"]?.stringValue ?? "?"), \(session["clientAuthentication"]?.stringValue ?? "?"))")
        }
    }
}

struct SessionWatch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print login events (saved, refreshed, expired, reauthRequired, loggedOut) as JSON lines.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Only this service.") var service: String?
    @Argument(help: "Only this account.") var account: String?

    func run() async throws {
        try await reportingErrors {
            let client = try global.sessionClient()
            try client.watchBlocking(service: service, account: account) { event in
                let line: JSONValue = ["kind": .string(event.kind), "service": .string(event.service),
                                       "account": .string(event.account), "at": .double(event.at.timeIntervalSince1970)]
                FileHandle.standardOutput.write(Data(line.serialized() + [0x0A]))
                return true
            }
        }
    }
}
