import Foundation
import TestSupport
import Testing
import Varlink
import VaultClient
import VaultCore
import VaultCrypto
import VaultSession
import VaultTesting

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Every provider kind through the real daemon process and its socket, against a real server of
    /// that kind on 127.0.0.1 (django-oauth-toolkit for oauth2 and, with OpenID Connect, oidc; the
    /// GoTrue stand-in; the Firebase stand-in). The
    /// daemon reads the test's manual clock from a file; proactive refresh is off.
    @Suite struct ProviderKindMatrixTests {
        static let kinds: [ProviderKind] = [.oauth2, .oidc, .supabase, .firebase]

        final class World: @unchecked Sendable {
            let cli: CLIHarness
            let kind: ProviderKind
            let peer: ProviderServer
            let clock: ManualClock
            let clockFile: String
            let key = try! ItemKey(service: "com.sorted.api", account: "ada")
            var sessions: SessionClient { SessionClient(socketPath: cli.socket, timeout: .seconds(20)) }

            /// - Parameter server: a provider started with other options than the matrix's.
            init(_ kind: ProviderKind, server: ProviderServer? = nil) throws {
                cli = try CLIHarness()
                try cli.initKeyFileVault()
                try cli.writePolicy(settings: "[session]\nproactive_refresh_seconds = 0\n")
                let clockFile = cli.root + "/clock"
                self.clockFile = clockFile
                clock = ManualClock(start: Date()) { date in
                    try? "\(date.timeIntervalSince1970)".write(toFile: clockFile, atomically: true, encoding: .utf8)
                }
                self.kind = kind
                peer = try server ?? ProviderServer.matrix(kind)
                try cli.startDaemon(extraArguments: ["--unsafe-clock-file", clockFile])
            }

            deinit { _ = cli.stopDaemon() }

            /// Signs in at the provider and saves the login through the socket API; the sign-in answer.
            @discardableResult
            func signIn() async throws -> [String: JSONValue] {
                let answer = try await peer.signIn(as: kind)
                try await sessions.save(tokenResponse: answer, provider: try peer.settings(as: kind), for: key)
                return answer
            }

            /// Every byte of the daemon's data directory (the vault database, its WAL and SHM).
            func dataFiles() -> [UInt8] {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: cli.dataDir)) ?? []
                return names.flatMap { FileManager.default.contents(atPath: cli.dataDir + "/" + $0).map(Array.init) ?? [] }
            }

            func containsBytes(_ haystack: [UInt8], _ needle: String) -> Bool {
                let bytes = Array(needle.utf8)
                guard !bytes.isEmpty, haystack.count >= bytes.count else { return false }
                return (0...(haystack.count - bytes.count)).contains { start in
                    haystack[start] == bytes[0] && Array(haystack[start..<(start + bytes.count)]) == bytes
                }
            }
        }

        @Test(arguments: kinds)
        func aValidTokenIsAnsweredWithNoProviderRequest(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            let answer = try await world.signIn()
            for _ in 0..<5 {
                let result = try await world.sessions.autoLogin(world.key)
                #expect(result.outcome == "valid")
                #expect(result.grant.map { $0.accessToken.constantTimeEquals(Array((world.peer.appToken(answer) ?? "").utf8)) } == true,
                        "the app gets its bearer token (Firebase: the ID token)")
            }
            #expect(try await world.peer.refreshRequests() == 0)
        }

        @Test(arguments: kinds)
        func anExpiredTokenIsRefreshedAndTheRotatedRefreshTokenIsKept(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            try await world.signIn()
            world.clock.advance(by: 3600)
            let first = try await world.sessions.autoLogin(world.key)
            #expect(first.outcome == "refreshed", "\(first)")
            // (The new token may equal the old one: the stand-ins mint identical JWTs within one second.)
            #expect(first.grant.map { $0.accessToken.count > 0 } == true)
            // The second refresh needs the rotated refresh token: oauth2 and GoTrue refuse a reused
            // one (GoTrue then also revokes the whole session), so this passes only if it was stored.
            // A forced Refresh, not another hour on the daemon's clock: the providers mint id tokens
            // on the real clock, and one two hours behind the daemon's would rightly be expired.
            let second = try await world.sessions.refresh(world.key)
            #expect(second.outcome == "refreshed", "\(second)")
            #expect(try await world.peer.refreshRequests() == 2)
            #expect(try await world.sessions.status(world.key).providerKind == kind.rawValue)
            #expect(try await world.sessions.list().map(\.providerKind) == [kind.rawValue])
        }

        @Test(arguments: kinds)
        func fiftyConcurrentAutoLoginsFromThreeProcessesMakeOneProviderRequest(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            try await world.signIn()
            world.clock.advance(by: 3600)
            let results = try SessionBurst.run(socket: world.cli.socket, key: world.key, root: world.cli.root, calls: [17, 17, 16])
            #expect(results.errors.isEmpty, "errors: \(results.errors)")
            #expect(results.outcomes.count == 50)
            #expect(results.outcomes.allSatisfy { $0 == "refreshed" || $0 == "valid" }, "\(results.outcomes)")
            #expect(results.tokens.count == 1, "the callers got \(results.tokens.count) different tokens")
            #expect(try await world.peer.refreshRequests() == 1, "the provider saw more than one refresh")
        }

        /// The provider back: the very next AutoLogin goes out (a client is never held back, beyond a
        /// floor of a second between attempts) and is refreshed.
        @Test(arguments: kinds)
        func aProviderDownIsOfflineWithNothingDeletedAndBackIsRefreshed(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            try await world.signIn()
            world.clock.advance(by: 3600)
            world.peer.stop()
            let offline = try await world.sessions.autoLogin(world.key)
            #expect(offline.outcome == "offline", "\(offline)")
            if case .offline(_, let reason) = offline, let key = world.peer.apiKey {
                #expect(try !reason.contains(key) && !world.cli.daemonLogged(key), "the API key is in the error text")
            }
            #expect(try await world.sessions.status(world.key).hasRefreshToken == true, "nothing was deleted")
            try world.peer.start()
            world.clock.advance(by: 2)
            let back = try await world.sessions.autoLogin(world.key)
            #expect(back.outcome == "refreshed", "\(back)")
            #expect(try await world.peer.refreshRequests() == 1)
        }

        @Test(arguments: kinds)
        func aRevokedLoginIsReauthRequiredAndWiped(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            try await world.signIn()
            try await world.peer.revokeAll()
            world.clock.advance(by: 3600)
            let result = try await world.sessions.autoLogin(world.key)
            #expect(result.refreshWasRejected, "\(result)")
            await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
        }

        @Test(arguments: kinds)
        func aDisabledUserIsReauthRequiredAndWiped(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            try await world.signIn()
            try await world.peer.disableAda()
            world.clock.advance(by: 3600)
            let result = try await world.sessions.autoLogin(world.key)
            #expect(result.refreshWasRejected, "\(result)")
            await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
        }

        @Test(arguments: kinds)
        func logoutDoesWhatTheTableSaysAndLeavesNoTokenBytes(_ kind: ProviderKind) async throws {
            let world = try World(kind)
            let answer = try await world.signIn()
            let refresh = try #require(world.peer.refreshToken(answer))
            let result = try await world.sessions.logout(world.key)
            #expect(result.wasLoggedIn)
            switch kind {
            case .firebase:
                #expect(result == LogoutResult(wasLoggedIn: true, revoked: false, revocationQueued: false, providerCannotRevoke: true))
                #expect(try await world.peer.refreshTokenWorks(refresh), "Firebase keeps the refresh token valid: the answer says so")
            default:
                #expect(result == LogoutResult(wasLoggedIn: true, revoked: true, revocationQueued: false))
                #expect(try await !world.peer.refreshTokenWorks(refresh), "the provider still accepts the logged-out refresh token")
            }
            await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
            _ = world.cli.stopDaemon()
            let files = world.dataFiles()
            #expect(!files.isEmpty)
            for token in [world.peer.appToken(answer), refresh].compactMap({ $0 }) {
                #expect(!world.containsBytes(files, token), "a token is left in the data files")
                #expect(try !world.cli.daemonLogged(token), "the daemon logged a token")
            }
        }
    }
}

private extension AutoLoginResult {
    var refreshWasRejected: Bool {
        if case .reauthRequired(.refreshRejected) = self { return true }
        return false
    }
}

extension DaemonSuite.ProviderKindMatrixTests {
    /// The CLI of the docs' examples: the sign-in answer on standard input, the key on a descriptor.
    @Test(arguments: [ProviderKind.supabase, .firebase, .oidc])
    func theCLISavesAKindWithItsKeyFromADescriptorAndAutologinPrintsTheToken(_ kind: ProviderKind) async throws {
        let world = try World(kind)
        let answer = try await world.peer.signIn(as: kind)
        let token = try #require(world.peer.appToken(answer))
        var arguments = ["session", "save", world.key.service, world.key.account, "--kind", kind.rawValue]
        var secret = ""
        switch kind {
        case .supabase:
            arguments += ["--url", world.peer.base, "--api-key-fd", "3"]
            secret = world.peer.apiKey ?? ""
        case .firebase:
            arguments += ["--url", world.peer.base + "/securetoken.googleapis.com", "--api-key-fd", "3"]
            secret = world.peer.apiKey ?? ""
        default:
            let provider = world.peer as! OAuthTestProvider
            arguments += ["--issuer", provider.issuer.absoluteString, "--client-id", OAuthTestProvider.clientID, "--client-secret-fd", "3"]
            secret = OAuthTestProvider.clientSecret
        }
        let saved = try world.cli.run(arguments, input: Data(JSONValue.object(answer).serialized()),
                                      prefix: ["/bin/sh", "-c", "exec \"$0\" \"$@\" 3<<EOF\n\(secret)\nEOF"])
        #expect(saved.status == 0, "\(saved.stderr)")
        let autologin = try world.cli.run(["session", "autologin", world.key.service, world.key.account])
        #expect(autologin.status == 0 && autologin.text == token, "\(autologin.stderr)")
        let status = try world.cli.run(["session", "status", "--json", world.key.service, world.key.account])
        #expect(try JSONValue.parse(Array(status.stdout)).objectValue?["providerKind"]?.stringValue == kind.rawValue, "\(status.text)")
        #expect(try !status.text.contains(secret) && !world.cli.daemonLogged(secret), "the key or secret was shown")
        let logout = try world.cli.run(["session", "logout", world.key.service, world.key.account])
        #expect(logout.status == 0)
        #expect(logout.text.contains(kind == .firebase ? "no way to revoke" : "revoked"), "\(logout.text)")
    }

    @Test func theCLIRefusesAKeyOnlyKindWithoutItsDescriptor() throws {
        let cli = try CLIHarness()
        let missing = try cli.run(["session", "save", "a", "b", "--kind", "supabase", "--url", "https://abc.supabase.co"], input: Data("{}".utf8))
        #expect(missing.status == 64 && missing.stderr.contains("--api-key-fd"), "\(missing.stderr)")
        let unknown = try cli.run(["session", "save", "a", "b", "--kind", "auth0"], input: Data("{}".utf8))
        #expect(unknown.status == 64 && unknown.stderr.contains("oauth2, oidc, firebase, supabase"), "\(unknown.stderr)")
    }
}

extension DaemonSuite.ProviderKindMatrixTests {
    /// Firebase answers USER_NOT_FOUND, GoTrue user_not_found / session_not_found, for a deleted user.
    @Test(arguments: [ProviderKind.supabase, .firebase])
    func aDeletedUserIsReauthRequiredAndWiped(_ kind: ProviderKind) async throws {
        let world = try World(kind)
        try await world.signIn()
        try await world.peer.deleteUser()
        world.clock.advance(by: 3600)
        let result = try await world.sessions.autoLogin(world.key)
        #expect(result.refreshWasRejected, "\(result)")
        await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
    }

    /// GoTrue before error codes (v2.145) answered a dead refresh token with `invalid_grant`.
    @Test func theOlderGoTrueErrorFormIsReauthRequiredToo() async throws {
        let world = try World(.supabase, server: try ProviderServer(.supabase, arguments: ["--error-format", "legacy"]))
        try await world.signIn()
        try await world.peer.revokeAll()
        world.clock.advance(by: 3600)
        let result = try await world.sessions.autoLogin(world.key)
        #expect(result.refreshWasRejected, "\(result)")
        await #expect(throws: VaultError(.notFound, "")) { try await world.sessions.status(world.key) }
    }
}
