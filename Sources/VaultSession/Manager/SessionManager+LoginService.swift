import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

extension SessionManager: LoginService {
    /// Parses the answer as the daemon's Save does (by the provider's kind), then saves it.
    @discardableResult
    public func save(tokenResponseJSON json: SecureBytes, provider: ProviderSettings, for key: ItemKey,
                     maximumLifetime: Int? = nil) async throws -> SessionStatus {
        let response = try json.withUnsafeBytes { try TokenResponse(json: $0, kind: provider.kind) }
        return try await save(response, settings: provider, for: key, maximumLifetime: maximumLifetime.map { TimeInterval($0) })
    }

    /// A sign-in of this process's user (the daemon passes its caller's uid to ``beginSignIn(_:owner:)``).
    public func beginSignIn(_ request: SignInRequest) async throws -> SignInStart {
        try await beginSignIn(request, owner: getuid())
    }

    public func completeSignIn(_ flowID: String, callbackQuery: SecureBytes) async throws -> SignInResult {
        try await completeSignIn(flowID, callbackQuery: callbackQuery, owner: getuid())
    }

    @discardableResult
    public func cancelSignIn(_ flowID: String) async throws -> Bool {
        cancelSignIn(flowID, owner: getuid())
    }

    /// ``events()`` of the logins asked for; names compare by bytes, as everywhere (see `ItemKey`).
    public func watch(service: String? = nil, account: String? = nil) async throws -> AsyncThrowingStream<SessionEvent, any Error> {
        if let service { try ItemKey.checkName(service, what: "service") }
        if let account { try ItemKey.checkName(account, what: "account") }
        return records.events.subscribe(service: service, account: account)
    }
}
