import ArgumentParser
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import CLIOptions
import VaultCore
import VaultSession

/// The provider options of `session save` and `session login`: one type, so both read a provider
/// the same way. Secrets come from descriptors, never from the command line.
struct ProviderOptions: ParsableArguments, Sendable {
    @Option(help: "The provider kind: oauth2 (default), oidc, firebase or supabase.") var kind: String = "oauth2"
    @Option(help: "oauth2: the provider's token endpoint (https, or http to a loopback address).") var tokenEndpoint: String?
    @Option(help: "oauth2: the provider's RFC 7009 revocation endpoint, used at logout.") var revocationEndpoint: String?
    @Option(help: "oauth2: where a browser sign-in starts (session login; oidc reads it from discovery).") var authorizationEndpoint: String?
    @Option(help: "oauth2: where a device sign-in (RFC 8628) asks for its code (session login; oidc reads it from discovery).") var deviceAuthorizationEndpoint: String?
    @Option(name: .customLong("provider"), help: "supabase: sign in (session login) through GoTrue's PKCE flow with this external provider, e.g. github.") var externalProvider: String?
    @Option(help: "oauth2, oidc: the OAuth2 client id.") var clientId: String?
    @Option(help: "oauth2, oidc: read the client secret (first line) from this file descriptor; omit for a public client.") var clientSecretFd: Int32?
    @Option(help: "oauth2, oidc: how the client authenticates: basic (default) or post.") var clientAuth: String = "basic"
    @Option(help: "oidc: the issuer URL (its /.well-known/openid-configuration names the endpoints).") var issuer: String?
    @Option(help: "supabase: the project URL; firebase: the securetoken base URL.") var url: String?
    @Option(help: "firebase, supabase: read the Web API key / anon key (first line) from this file descriptor.") var apiKeyFd: Int32?

    /// The options as provider settings; secrets come from their descriptors.
    func settings() throws -> ProviderSettings {
        guard let kind = ProviderKind(rawValue: kind) else {
            throw VaultError.invalidArgument("--kind takes \(ProviderKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let authentication = OAuthProvider.ClientAuthentication(rawValue: clientAuth) else {
            throw VaultError.invalidArgument("--client-auth takes basic or post")
        }
        func parse(_ text: String?, _ option: String) throws -> URL? {
            guard let text else { return nil }
            guard let url = URL(string: text), url.scheme != nil else { throw VaultError.invalidArgument("\(option) is not a URL") }
            return url
        }
        if kind == .firebase || kind == .supabase, apiKeyFd == nil {
            throw VaultError.invalidArgument("--kind \(kind) needs --api-key-fd N (the key is never taken from the command line)")
        }
        return ProviderSettings(
            kind: kind, tokenEndpoint: try parse(tokenEndpoint, "--token-endpoint"),
            revocationEndpoint: try parse(revocationEndpoint, "--revocation-endpoint"), clientID: clientId,
            clientSecret: try clientSecretFd.map { try SecretInput.passphrase(fd: $0, prompt: "") },
            clientAuthentication: authentication, issuer: try parse(issuer, "--issuer"), url: try parse(url, "--url"),
            apiKey: try apiKeyFd.map { try SecretInput.passphrase(fd: $0, prompt: "") },
            authorizationEndpoint: try parse(authorizationEndpoint, "--authorization-endpoint"),
            deviceAuthorizationEndpoint: try parse(deviceAuthorizationEndpoint, "--device-authorization-endpoint"),
            externalProvider: externalProvider)
    }
}
