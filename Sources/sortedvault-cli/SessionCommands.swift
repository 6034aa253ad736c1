import ArgumentParser
import BoundedJSON
import FoundationEssentials
import CLICore
import CLIOptions
import VaultClient
import VaultCore
import VaultAPI
import VaultCrypto
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

struct SessionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "session",
        abstract: "Keep a login (OAuth2, OpenID Connect, Firebase, Supabase) alive: save it once, then autologin at every start.",
        discussion: """
            autologin and refresh print the access token on standard output and exit with \
            0 (valid or refreshed), 8 (sign in again: the reason is on standard error) or \
            9 (the provider is offline: the cached token is printed only while it is still valid).
            """,
        subcommands: [SessionLogin.self, SessionSave.self, LoginOutcomeCommand<AutoLoginCall>.self, LoginOutcomeCommand<RefreshCall>.self, SessionLogout.self,
                      SessionStatusCommand.self, SessionListCommand.self, SessionWatch.self,
                      SessionCancelLogins.self])
}

/// SERVICE ACCOUNT, shared by the session commands.
struct SessionKeyArguments: ParsableArguments {
    @Argument(help: "The app's service, e.g. com.sorted.api.") var service: String
    @Argument(help: "The account, e.g. the user's e-mail or id.") var account: String

    func key() throws -> ItemKey { try ItemKey(service: service, account: account) }
}

struct SessionSave: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "save",
        abstract: "Store a login from the provider's sign-in answer (JSON on standard input).",
        discussion: """
            Pipe the JSON the provider answered at sign-in, unchanged: oauth2 and oidc (access_token, \
            token_type, expires_in, refresh_token, scope, id_token), supabase (the session of \
            signInWithPassword), firebase (the answer of signInWithPassword: idToken, refreshToken, \
            expiresIn, localId). Secrets are read from descriptors, never from the command line: \
            --client-secret-fd, --api-key-fd.

            --kind oauth2 (default): --token-endpoint, --client-id [--revocation-endpoint]
            --kind oidc:     --issuer, --client-id (endpoints from the discovery document)
            --kind firebase: --api-key-fd [--url, default https://securetoken.googleapis.com;
                             the Auth emulator: http://127.0.0.1:PORT/securetoken.googleapis.com]
            --kind supabase: --url https://PROJECT.supabase.co, --api-key-fd (the anon key)
            """)

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments
    @OptionGroup var providerOptions: ProviderOptions
    @Option(help: "End the login this many seconds after sign-in, whatever its tokens say.") var maxLifetime: Int?

    func perform() async throws {
        let key = try login.key()
        let settings = try providerOptions.settings()
        if settings.kind != .oidc { _ = try settings.resolved() }  // a clear error before anything is read
        let input = try SecretInput.readAll(fd: 0, limit: TokenResponse.maximumBytes, what: "the token response")
        // The tokens go from standard input into secure memory and onto the wire, never a String.
        _ = try input.withUnsafeBytes { try TokenResponse(json: $0, kind: settings.kind) }  // a clear error here, before the daemon sees it
        let session = try await global.sessionClient().save(tokenResponseJSON: input, provider: settings, for: key,
                                                             maximumLifetime: maxLifetime)
        print("saved the \(settings.kind) login for \(key.service)/\(key.account); the token expires \(session.accessTokenExpiresAt)")
    }
}

/// `session autologin` and `session refresh`: one call on a login, its outcome printed (exit 8:
/// sign in again, 9: offline). `Call` names the command and makes the call.
struct LoginOutcomeCommand<Call: LoginOutcomeCall>: ReportingCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: Call.commandName, abstract: Call.abstract)
    }

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments

    func perform() async throws {
        try printOutcome(try await Call.outcome(global.sessionClient(), login.key()))
    }
}

protocol LoginOutcomeCall {
    static var commandName: String { get }
    static var abstract: String { get }
    static func outcome(_ client: SessionClient, _ key: ItemKey) async throws -> AutoLoginResult
}

enum AutoLoginCall: LoginOutcomeCall {
    static let commandName = "autologin"
    static let abstract = "Print a valid access token, refreshing it when needed (exit 8: sign in again, 9: offline)."
    static func outcome(_ client: SessionClient, _ key: ItemKey) async throws -> AutoLoginResult { try await client.autoLogin(key) }
}

enum RefreshCall: LoginOutcomeCall {
    static let commandName = "refresh"
    static let abstract = "Refresh now and print the new access token (exit 8: sign in again, 9: offline)."
    static func outcome(_ client: SessionClient, _ key: ItemKey) async throws -> AutoLoginResult { try await client.refresh(key) }
}

/// Writes the token (if any) to stdout and exits with the outcome's code.
private func printOutcome(_ result: AutoLoginResult) throws {
    if let grant = result.grant {
        StandardStreams.writeToStandardOutput(grant.accessToken)
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

struct SessionLogout: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Wipe the login and revoke its tokens at the provider (queued when offline).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments

    func perform() async throws {
        let result = try await global.sessionClient().logout(try login.key())
        if !result.wasLoggedIn {
            print("no login was stored; nothing to do")
        } else if result.revoked {
            print("logged out; the provider revoked the tokens")
        } else if result.revocationQueued {
            print("logged out here; the provider is unreachable, so the revocation is queued and retried by the daemon")
        } else if result.providerCannotRevoke {
            print("logged out here; this provider gives apps no way to revoke, so its refresh token stays valid at the provider until it is revoked there (for Firebase: the Admin SDK's revokeRefreshTokens, or disabling the user)")
        } else {
            print("logged out; no revocation endpoint is configured, so the tokens stay valid at the provider until they expire")
        }
    }
}

struct SessionStatusCommand: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show a login's state (never its tokens).")

    @OptionGroup var global: GlobalOptions
    @OptionGroup var login: SessionKeyArguments
    @Flag(help: "Print JSON.") var json = false

    func perform() async throws {
        let session = VarlinkWire.jsonObject(SessionInterface.SessionState(try await global.sessionClient().status(try login.key())))
        if json {
            print(CLIJSON.text(.object(session)))
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
        print("provider: \(session["providerKind"]?.stringValue ?? "oauth2") at \(session["tokenEndpoint"]?.stringValue ?? "?") (client \(session["clientId"]?.stringValue ?? "?"), \(session["clientAuthentication"]?.stringValue ?? "?"))")
    }
}

struct SessionWatch: ReportingCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Print login events (saved, refreshed, expired, reauthRequired, loggedOut) as JSON lines.")

    @OptionGroup var global: GlobalOptions
    @Argument(help: "Only this service.") var service: String?
    @Argument(help: "Only this account.") var account: String?

    func perform() async throws {
        let client = try global.sessionClient()
        let watching: JSONValue = ["kind": "watching", "service": .string(service ?? ""), "account": .string(account ?? "")]
        let events = try await client.watch(service: service, account: account)
        StandardStreams.writeToStandardOutput(watching.serialized() + [0x0A])
        for try await event in events {
            let line: JSONValue = ["kind": .string(event.kind.rawValue), "service": .string(event.key.service),
                                   "account": .string(event.key.account), "at": .double(event.at.timeIntervalSince1970)]
            StandardStreams.writeToStandardOutput(line.serialized() + [0x0A])
        }
    }
}
