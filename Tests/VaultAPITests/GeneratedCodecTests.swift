import BoundedJSON
import Testing
import VaultAPI
import VaultCrypto

/// Every method's generated request and reply read back as the value written, and every member
/// the interface marks `@secret` is `SecureBytes` in Swift, never text.
@Suite(.timeLimit(.minutes(20))) struct GeneratedCodecTests {
    static let secret = SecureBytes(copying: Array(0..<255 as Range<UInt8>) + [0xFF, 0x00])
    static let item = VaultInterface.Item(service: "s", account: "a", label: "l", attributes: ["k": "v"], created: 1, modified: 2.5, expires: 9)
    static let grant = SessionInterface.Grant(accessToken: secret, tokenType: "Bearer", expiresAt: 3, scopes: ["a"])
    static let state = SessionInterface.SessionState(
        state: "valid", providerKind: "oidc", tokenType: "Bearer", scopes: ["openid"], accessTokenExpiresAt: 1, refreshTokenExpiresAt: 2,
        absoluteExpiresAt: nil, hasRefreshToken: true, hasIdToken: false, issuedAt: 0, signedInAt: 0, lastRefreshedAt: 0.5, userId: "u",
        tokenEndpoint: "https://x/token", revocationEndpoint: nil, clientId: "c", clientAuthentication: "basic", hasClientSecret: true,
        retryNotBefore: nil)

    /// One sample call and reply per method, checked by `check`.
    final class Coverage {
        var methods: Set<String> = []
    }

    @Test func everyVaultMethodRoundTrips() throws {
        typealias I = VaultInterface
        let covered = Coverage()
        try check(I.Store.self, .init(service: "s", account: "a", secret: Self.secret, label: "l", attributes: ["x": "y"], expires: 9.5, keep: true), .init(), covered)
        try check(I.Retrieve.self, .init(service: "s", account: "a"), .init(secret: Self.secret, item: Self.item), covered)
        try check(I.Delete.self, .init(service: "s", account: "a"), .init(), covered)
        try check(I.Exists.self, .init(service: "s", account: "a"), .init(exists: true), covered)
        try check(I.List.self, .init(service: "s"), .init(items: [Self.item, .init(service: "t", account: "b", created: 3, modified: 4)]), covered)
        try check(I.LogNames.self, .init(), .init(names: ["private:1": "github"]), covered)
        try check(I.Status.self, .init(), .init(locked: false, keySources: ["keyfile"], items: 3, logins: 1, queuedRevocations: 0, version: "0.1.0",
                                                autoLockMinutes: 15, pid: 7, uptimeSeconds: 8, policyFiles: ["a.toml"], policyReloads: 1,
                                                policyError: "bad"), covered)
        try check(I.Unlock.self, .init(passphrase: SecureBytes(copying: [0xFF, 0x00])), .init(), covered)
        try check(I.Unlock.self, .init(passphrase: nil), .init(), covered)
        try check(I.Lock.self, .init(), .init(), covered)
        try check(I.ChangePassphrase.self, .init(old: SecureBytes(copying: [1]), new: SecureBytes(copying: [2, 3])), .init(), covered)
        try check(I.Export.self, .init(passphrase: Self.secret, recipients: nil, armor: true), .init(part: "YWdl", items: 2, logins: 1), covered)
        try check(I.Export.self, .init(passphrase: nil, recipients: ["age1a", "age1b"]), .init(part: "", items: 0, logins: 0), covered)
        #expect(covered.methods == Set(I.Method.allCases.map(\.rawValue)), "a vault method has no round trip here")
    }

    @Test func everySessionMethodRoundTrips() throws {
        typealias I = SessionInterface
        let covered = Coverage()
        let provider = I.Provider(kind: "oauth2", tokenEndpoint: "https://x/token", clientId: "c", clientSecret: Self.secret,
                                  apiKey: SecureBytes(copying: [7]))
        try check(I.Save.self, .init(service: "s", account: "a", tokenResponse: ["token_type": "Bearer"],
                                     tokens: ["access_token": SecureBytes(copying: Array("t".utf8))], provider: provider, maxLifetimeSeconds: 60),
                  .init(session: Self.state), covered)
        try check(I.AutoLogin.self, .init(service: "s", account: "a"), .init(outcome: .valid, grant: Self.grant), covered)
        try check(I.Refresh.self, .init(service: "s", account: "a"), .init(outcome: .reauthRequired, reason: "revoked"), covered)
        try check(I.Logout.self, .init(service: "s", account: "a"),
                  .init(wasLoggedIn: true, revoked: false, revocationQueued: true, providerCannotRevoke: false), covered)
        try check(I.Status.self, .init(service: "s", account: "a"), .init(session: Self.state), covered)
        try check(I.FleetRevoke.self, .init(service: "s"), .init(loggedOut: 3, revoked: 2, revocationsQueued: 1), covered)
        try check(I.FleetStatus.self, .init(), .init(pendingRevocations: 4, stuckRevocations: 1, stuckAfter: 10, oldestRevocationSeconds: 2.5,
                                                     loginsInDoubt: 1, dataKeys: [.init(id: 1, rows: 0), .init(id: 2, rows: 7)]), covered)
        try check(I.FleetStatus.self, .init(), .init(pendingRevocations: 0, stuckRevocations: 0, stuckAfter: 10, loginsInDoubt: 0), covered)
        try check(I.FleetRewrap.self, .init(batchSize: 100), .init(keyId: 3, rows: 250, retiredKeys: [.init(id: 1, rows: 0), .init(id: 2, rows: 0)]), covered)
        try check(I.FleetRewrap.self, .init(batchSize: nil), .init(keyId: 2, rows: 0, retiredKeys: []), covered)
        try check(I.List.self, .init(service: nil), .init(logins: [.init(service: "s", account: "a", providerKind: "oidc", userId: nil, state: "expired",
                                                                        accessTokenExpiresAt: 1, hasRefreshToken: true)]), covered)
        try check(I.Watch.self, .init(service: "s", account: nil), .init(event: .init(kind: .saved, service: "s", account: "a", at: 12)), covered)
        var signIn = provider
        signIn.authorizationEndpoint = "https://x/authorize"
        try check(I.BeginLogin.self, .init(service: "s", account: nil, provider: signIn, flow: "browser", redirectUri: "http://127.0.0.1:9/cb",
                                           scopes: ["openid"], timeoutSeconds: 300),
                  .init(flowId: "f", authorizationUrl: "https://x/authorize?state=s", expiresAt: 300), covered)
        try check(I.CompleteLogin.self, .init(flowId: "f", callbackQuery: Self.secret), .init(session: Self.state, service: "s", account: "u"), covered)
        try check(I.CancelLogin.self, .init(flowId: "f"), .init(cancelled: true), covered)
        try check(I.CancelLogins.self, .init(service: "s"), .init(cancelled: 3), covered)
        try check(I.PasswordLogin.self, .init(service: "s", account: nil, provider: provider, email: "ada@example.com",
                                              password: Self.secret, create: true),
                  .init(session: Self.state, account: "ada@example.com"), covered)
        let login = I.BackupLogin(service: "s", account: "a", provider: provider, accessToken: Self.secret, refreshToken: SecureBytes(copying: [9]),
                                  idToken: nil, tokenType: "Bearer", scopes: ["read"], accessTokenExpiresAt: 10, refreshTokenExpiresAt: nil,
                                  absoluteExpiresAt: 20, issuedAt: 1, signedInAt: 0.5, lastRefreshedAt: nil, userId: "u")
        try check(I.Restore.self, .init(login: login, replace: true), .init(outcome: .kept), covered)
        #expect(covered.methods == Set(I.Method.allCases.map(\.rawValue)), "a session method has no round trip here")
    }

    /// An error reply's parameters are written and read by the error's one generated type.
    @Test func errorsRoundTripThroughTheirParameters() {
        let notFound = VaultInterface.NotFound(service: "s", account: "a")
        #expect(notFound.parameters == ["service": "s", "account": "a"])
        #expect(VaultInterface.NotFound.decode(notFound.parameters) == notFound)
        #expect(VaultInterface.TooManyAttempts.decode(VaultInterface.TooManyAttempts(retryAfterSeconds: 2.5).parameters)?.retryAfterSeconds == 2.5)
        #expect(SessionInterface.Locked().parameters == [:])
        #expect(VaultInterface.Errors.all.map { $0.name }.contains("org.sortedvault.vault.Unsupported"))
        // A reply without the error's required parameters is not that error's shape.
        #expect(VaultInterface.IntegrityFailure.decode([:]) == nil)
    }

    private func check<M: VarlinkMethod>(_ method: M.Type, _ request: M.Request, _ reply: M.Reply, _ covered: Coverage,
                                         sourceLocation: SourceLocation = #_sourceLocation) throws
    where M.Request: Equatable, M.Reply: Equatable {
        covered.methods.insert(M.name)
        #expect(try roundTrip(request, secrets: M.requestSecrets) == request, "\(M.name) request", sourceLocation: sourceLocation)
        #expect(try roundTrip(reply, secrets: M.replySecrets) == reply, "\(M.name) reply", sourceLocation: sourceLocation)
        expectSecretsAreSecureBytes(request, M.requestSecrets, sourceLocation: sourceLocation)
        expectSecretsAreSecureBytes(reply, M.replySecrets, sourceLocation: sourceLocation)
    }

    /// Writes `value` as a message's parameters and reads it back with its secrets diverted.
    private func roundTrip<T: WireCodable>(_ value: T, secrets limits: SecretLimits) throws -> T {
        let frame = VarlinkWire.encodeReply(value)
        return try frame.withUnsafeBytes { raw in
            let (message, secrets) = try VarlinkWire.parse(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]), maxDepth: 64, secrets: limits)
            return try T(from: WireParameters(message["parameters"]?.objectValue ?? [:], secrets: secrets))
        }
    }

    /// Each secret path names a stored property that holds `SecureBytes` (or nothing), not a `String`.
    private func expectSecretsAreSecureBytes(_ value: Any, _ limits: SecretLimits, sourceLocation: SourceLocation) {
        for path in limits.limits.keys where !limits.text.contains(path) {
            var current: Any? = value
            var absent = false
            for member in path.split(separator: ".") where !absent {
                guard let present = current.flatMap({ unwrap($0) }) else {
                    absent = true  // an optional object that is not there holds no secret
                    break
                }
                current = Mirror(reflecting: present).children.first { $0.label == String(member) }?.value
            }
            if absent { continue }
            guard let leaf = current else { Issue.record("no member at \(path)", sourceLocation: sourceLocation); continue }
            let type = type(of: leaf)
            #expect(type == SecureBytes.self || type == SecureBytes?.self, "\(path) is \(type)", sourceLocation: sourceLocation)
        }
    }

    private func unwrap(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first?.value
    }
}
