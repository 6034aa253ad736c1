import CLICore
import VaultClient
import VaultCore

/// The way in for an app: the user's daemon, found with no configuration.
///
/// ```swift
/// import SortedVault
///
/// let login = try SortedVault.login(service: "com.sorted.api", account: "ada")
/// request.setValue("Bearer \(try await login.accessToken(minValid: 60))", forHTTPHeaderField: "Authorization")
/// ```
public enum SortedVault {
    /// A login of the user's daemon. Nothing is sent yet: a daemon that is not running is reported
    /// (`.unavailable`) by the first call, so an app can start before it.
    public static func login(service: String, account: String) throws -> VaultLogin {
        try VaultLogin(service: service, account: account, in: try sessions())
    }

    /// The login API of the user's daemon, for what ``VaultLogin`` does not cover (``SessionClient/list(service:)``).
    public static func sessions() throws -> SessionClient {
        SessionClient(socketPath: try socketPath())
    }

    /// The daemon's socket: `SORTEDVAULT_SOCKET` when set, else `$XDG_RUNTIME_DIR/sortedvault/socket`
    /// (the CLI's own rule, ``VaultPaths``). Throws `.unavailable` naming both when neither is set,
    /// as in a system service, which has no `XDG_RUNTIME_DIR`.
    public static func socketPath(environment: (String) -> String? = VaultPaths.processEnvironment) throws -> String {
        let explicit = environment("SORTEDVAULT_SOCKET").flatMap { $0.isEmpty ? nil : $0 }
        do {
            return try CLILocation(socket: explicit).resolve(environment: environment).socket
        } catch {
            throw VaultError(.unavailable, """
                no sortedvault socket to use: SORTEDVAULT_SOCKET is not set and XDG_RUNTIME_DIR is not set (or not an \
                absolute path), as in a system service; set SORTEDVAULT_SOCKET to the daemon's socket \
                (its default is $XDG_RUNTIME_DIR/sortedvault/socket of the user who runs it)
                """)
        }
    }
}
