import BoundedJSON
import Foundation
import VaultCrypto
import VaultSession

/// A real OAuth2 provider for the tests: django-oauth-toolkit (`Tests/Support/oauth-provider`) run by
/// the shared `ProviderServer` launcher. It has user `ada` and the confidential client `sorted-app`,
/// rotates refresh tokens, rejects a reused one, revokes (RFC 7009) and introspects (RFC 7662);
/// `/test/…` lets a test count requests, fail or hold answers (see `ProviderServer+Controls`).
public final class OAuthTestProvider: ProviderServer, @unchecked Sendable {
    public static let clientID = "sorted-app"
    public static let clientSecret = "sorted-app-secret"

    /// The access tokens' lifetime (`--access-token-seconds`); nil keeps the provider's hour.
    public let accessTokenSeconds: Int?

    /// `deviceInterval`: the seconds between device-code polls the provider asks for (5 unless given).
    public init(accessTokenSeconds: Int? = nil, deviceInterval: Int? = nil) throws {
        self.accessTokenSeconds = accessTokenSeconds
        try super.init(.oauth2, arguments: (accessTokenSeconds.map { ["--access-token-seconds", "\($0)"] } ?? [])
                                           + (deviceInterval.map { ["--device-interval", "\($0)"] } ?? []))
    }

    public var revocationEndpoint: URL { URL(string: base + "/o/revoke_token/")! }

    /// The provider settings a client app saves with its login.
    public func provider(authentication: OAuthProvider.ClientAuthentication = .basic, revocation: Bool = true) throws -> OAuthProvider {
        try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocation ? revocationEndpoint : nil,
                          clientID: Self.clientID, clientSecret: SecureBytes(copying: Array(Self.clientSecret.utf8)),
                          clientAuthentication: authentication)
    }

    /// Whether the provider's introspection (RFC 7662) says the token is active.
    public func isActive(_ token: String) async throws -> Bool {
        let (status, body) = try await post("/o/introspect/", form: ["token": token])
        guard status == 200, case .object(let object) = try JSONValue.parse(body) else {
            throw HarnessError("introspection failed with HTTP \(status)")
        }
        return object["active"]?.boolValue ?? false
    }

    /// Answers every revocation with 503 `temporarily_unavailable` while `down`, unprocessed.
    public func revocation(down: Bool) async throws {
        try await control("/test/revocation", ["down": .bool(down)])
    }

    /// What DOT's token tables hold: access tokens (revoking one deletes it) and refresh tokens not revoked.
    public func liveTokens() async throws -> (access: Int, refresh: Int) {
        let (status, body) = try await send("GET", "/test/tokens")
        guard status == 200, let object = (try? JSONValue.parse(body))?.objectValue,
              let access = object["access"]?.intValue, let refresh = object["refresh"]?.intValue else {
            throw HarnessError("bad /test/tokens answer (\(status))")
        }
        return (Int(access), Int(refresh))
    }

    /// Token ids (a hash; see provider.py) of every token a sign-in or a refresh answer gave.
    public func issuedTokens() async throws -> [String] {
        (try await stats()["issued"]?.arrayValue ?? []).compactMap(\.stringValue)
    }

    /// Per token id: how many revocation requests for it the provider answered 200.
    public func revokedTokens() async throws -> [String: Int] {
        try await counts("revoked")
    }

    /// Tries a refresh token directly: the provider's HTTP status and `error`.
    public func tryRefresh(_ refreshToken: String) async throws -> (Int, String?) {
        let (status, body) = try await refreshDirectly(refreshToken)
        return (status, (try? JSONValue.parse(body))?.objectValue?["error"]?.stringValue)
    }

    /// Every form POST authenticates as the client `sorted-app` with HTTP Basic unless `headers` says otherwise.
    public override func post(_ path: String, form: [String: String], headers: [String: String] = [:]) async throws -> (Int, [UInt8]) {
        var headers = headers
        if headers["Authorization"] == nil { headers["Authorization"] = Self.basic((Self.clientID, Self.clientSecret)) }
        return try await super.post(path, form: form, headers: headers)
    }

    /// A form POST authenticated as `client` with HTTP Basic.
    public func post(_ path: String, form: [String: String], client: (id: String, secret: String)) async throws -> (Int, [UInt8]) {
        try await super.post(path, form: form, headers: ["Authorization": Self.basic(client)])
    }

    private static func basic(_ client: (id: String, secret: String)) -> String {
        "Basic " + Data("\(client.id):\(client.secret)".utf8).base64EncodedString()
    }
}

extension Array where Element == UInt8 {
    /// A string field of a JSON object (test helper for token responses).
    public func jsonField(_ name: String) -> String? {
        (try? JSONValue.parse(self))?.objectValue?[name]?.stringValue
    }
}
