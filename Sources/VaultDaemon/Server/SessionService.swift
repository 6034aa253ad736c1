import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import Varlink
import VaultAPI
import VaultCore
import VaultPolicy
import VaultClient
import VaultSession

/// The daemon's `org.sortedvault.session` interface: the methods' bodies, which hand each call to
/// the one ``SessionManager`` that owns every login — which is what makes refresh single-flight
/// across all clients and processes. The generated dispatcher (``SessionInterfaceServer``) checks
/// each call against the access policy (operations `session.*` and `fleet.*`, for the caller's
/// service) before its body runs.
///
/// AutoLogin of a login whose access token is still valid answers now
/// (``SessionManager/autoLoginNow(_:)``); everything else, and an AutoLogin that must refresh, is
/// answered later, within ``AnswerDeadline`` (`offline` "ask again" past it, while the refresh goes
/// on), so the client, which waits longer, always hears from the daemon.
final class SessionService: SessionInterfaceServer {
    let sessions: SessionManager
    let access: AccessControl
    let activity: ActivityClock
    private let clock: any VaultClock
    private let answerDeadline: AnswerDeadline
    private let logger: Logger

    init(sessions: SessionManager, access: AccessControl, activity: ActivityClock, clock: any VaultClock,
         answerDeadline: AnswerDeadline, logger: Logger) {
        self.sessions = sessions
        self.access = access
        self.activity = activity
        self.clock = clock
        self.answerDeadline = answerDeadline
        self.logger = logger
    }

    /// The service of a sign-in flow of the caller's uid (CompleteLogin, CancelLogin check the
    /// policy for it).
    func lookupService(_ value: String, for method: SessionInterface.Method, peer: PeerCredentials) -> String? {
        sessions.signInService(value, owner: peer.uid)
    }

    // MARK: Logins

    func autoLogin(_ request: SessionInterface.LoginName, call: DaemonCall) throws -> Answer<SessionInterface.LoginOutcome> {
        let key = try request.key()
        if let result = sessions.autoLoginNow(key) { return .now(SessionInterface.LoginOutcome(result)) }
        return .later {
            // A fleet's login whose token is valid: one read answers (bounded by the store's own
            // deadline); only a login that needs more takes the refresh road.
            if let result = await self.sessions.autoLoginRead(key) { return SessionInterface.LoginOutcome(result) }
            return SessionInterface.LoginOutcome(try await self.answerDeadline.bounded { try await self.sessions.autoLogin(key) })
        }
    }

    func refresh(_ request: SessionInterface.LoginName, call: DaemonCall) throws -> Answer<SessionInterface.LoginOutcome> {
        let key = try request.key()
        return .later { SessionInterface.LoginOutcome(try await self.answerDeadline.bounded { try await self.sessions.refresh(key) }) }
    }

    func logout(_ request: SessionInterface.LoginName, call: DaemonCall) throws -> Answer<SessionInterface.Logout.Reply> {
        let key = try request.key()
        return .later {
            let result = try await self.sessions.logout(key)
            self.logger.info("logged out", metadata: ["uid": "\(call.peer.uid)", "revoked": "\(result.revoked)"])
            return SessionInterface.Logout.Reply(wasLoggedIn: result.wasLoggedIn, revoked: result.revoked,
                                                 revocationQueued: result.revocationQueued,
                                                 providerCannotRevoke: result.providerCannotRevoke)
        }
    }

    func status(_ request: SessionInterface.LoginName, call: DaemonCall) throws -> Answer<SessionInterface.Status.Reply> {
        let key = try request.key()
        return .later { SessionInterface.Status.Reply(session: .init(try await self.sessions.status(key))) }
    }

    // MARK: Fleet

    func fleetRevoke(_ request: SessionInterface.FleetRevoke.Request, call: DaemonCall) throws -> Answer<SessionInterface.FleetRevoke.Reply> {
        .later {
            let result = try await self.sessions.logoutAll(service: request.service)
            self.logger.notice("logged out every login of a service", metadata: [
                "uid": "\(call.peer.uid)", "loggedOut": "\(result.loggedOut)", "revocationsQueued": "\(result.revocationsQueued)",
            ])
            return SessionInterface.FleetRevoke.Reply(result)
        }
    }

    func fleetStatus(_ request: NoParameters, call: DaemonCall) throws -> Answer<SessionInterface.FleetStatus.Reply> {
        .later { SessionInterface.FleetStatus.Reply(try await self.sessions.fleetStatus()) }
    }

    func fleetRewrap(_ request: SessionInterface.FleetRewrap.Request, call: DaemonCall) throws -> Answer<SessionInterface.FleetRewrap.Reply> {
        let batchSize = request.batchSize.map { Int(clamping: $0) } ?? Self.rewrapBatchSize
        return .later { try await self.rewrap(batchSize: batchSize, peer: call.peer) }
    }

    /// Rows per transaction of a rewrap when the caller names none: few enough that a batch's locks
    /// are short for the readers and writers beside it.
    static let rewrapBatchSize = 500

    /// The fleet's rewrap (``SessionManager/rewrapDataKeys(batchSize:)``); `Unsupported` for a store with no data keys.
    private func rewrap(batchSize: Int, peer: PeerCredentials) async throws -> SessionInterface.FleetRewrap.Reply {
        guard let result = try await sessions.rewrapDataKeys(batchSize: batchSize) else {
            throw VarlinkError(SessionInterface.Unsupported(reason: "not a fleet store: this daemon keeps a one-host vault, sealed under its master key, which has no data keys to rewrap (`sortedvault change-passphrase` changes the key that wraps it); rewrap runs on a daemon with backend = \"postgresql\""))
        }
        logger.notice("rewrapped the fleet's store", metadata: [
            "uid": "\(peer.uid)", "keyID": "\(result.keyID)", "rows": "\(result.rows)", "retired": "\(result.retiredKeyIDs)",
        ])
        return SessionInterface.FleetRewrap.Reply(result)
    }

    /// The logins whose service the policy lets this caller `session.list`; never their tokens.
    func list(_ request: SessionInterface.List.Request, call: DaemonCall) throws -> Answer<SessionInterface.List.Reply> {
        .later { [access] in
            let entries = try await self.sessions.list(service: request.service).filter {
                access.allows(call.peer, SessionInterface.List.operation, service: $0.service)
            }
            return SessionInterface.List.Reply(logins: entries.map(SessionInterface.Login.init))
        }
    }

    func save(_ request: SessionInterface.Save.Request, call: DaemonCall) throws -> Answer<SessionInterface.Save.Reply> {
        let key = try SessionInterface.LoginName(service: request.service, account: request.account).key()
        let settings = try ProviderSettings(wire: request.provider)
        let response = try TokenResponse(object: request.tokenResponse, tokens: request.tokens, kind: settings.kind)
        let lifetime = request.maxLifetimeSeconds.map { TimeInterval($0) }
        return .later {
            let status = try await self.sessions.save(response, settings: settings, for: key, maximumLifetime: lifetime)
            self.logger.info("login saved", metadata: ["uid": "\(call.peer.uid)"])
            return SessionInterface.Save.Reply(session: .init(status))
        }
    }

    /// Begins a sign-in the daemon runs; the access log records who began it (operation session.login).
    func beginLogin(_ request: SessionInterface.BeginLogin.Request, call: DaemonCall) throws -> Answer<SessionInterface.BeginLogin.Reply> {
        .later { try await self.beginLogin(request, peer: call.peer) }
    }

    private func beginLogin(_ request: SessionInterface.BeginLogin.Request, peer: PeerCredentials) async throws -> SessionInterface.BeginLogin.Reply {
        let service = request.service
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        guard let flow = SignInFlow(rawValue: request.flow) else {
            throw WireParameterError("flow", "must be one of \(SignInFlow.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let redirect = URL(string: request.redirectUri) else { throw WireParameterError("redirectUri", "is not a URL") }
        let lifetime = request.timeoutSeconds.map { TimeInterval($0) } ?? SignInRequest.defaultLifetime
        let start = try await sessions.beginSignIn(
            SignInRequest(service: service, account: account, settings: try ProviderSettings(wire: request.provider), flow: flow,
                          redirectURI: redirect, scopes: request.scopes, lifetime: lifetime),
            owner: peer.uid, program: peer.executable)
        logger.info("sign-in begun", metadata: ["uid": "\(peer.uid)", "flow": "\(flow.rawValue)"])
        guard let device = start.device else {
            return SessionInterface.BeginLogin.Reply(flowId: start.flowID, authorizationUrl: start.authorizationURL.absoluteString,
                                                            expiresAt: start.expiresAt.timeIntervalSince1970)
        }
        return SessionInterface.BeginLogin.Reply(
            flowId: start.flowID, userCode: device.userCode, verificationUri: device.verificationURI.absoluteString,
            verificationUriComplete: device.verificationURIComplete?.absoluteString, intervalSeconds: Int64(device.interval),
            expiresAt: start.expiresAt.timeIntervalSince1970)
    }

    /// Completes a sign-in of this caller's uid: policy session.login on its service, then the
    /// manager's checks (state, code exchange, id token with nonce) and the save.
    func completeLogin(_ request: SessionInterface.CompleteLogin.Request, call: DaemonCall) throws -> Answer<SessionInterface.CompleteLogin.Reply> {
        .later { try await self.completeLogin(request, peer: call.peer) }
    }

    private func completeLogin(_ request: SessionInterface.CompleteLogin.Request, peer: PeerCredentials) async throws -> SessionInterface.CompleteLogin.Reply {
        do {
            let result = try await sessions.completeSignIn(request.flowId, callbackQuery: request.callbackQuery, owner: peer.uid)
            logger.info("sign-in completed", metadata: ["uid": "\(peer.uid)"])
            return SessionInterface.CompleteLogin.Reply(session: .init(result.status), service: result.key.service, account: result.key.account)
        } catch let error as VaultError where error.code == .callbackMismatch {
            logger.notice("a sign-in callback with the wrong state was ignored", metadata: ["uid": "\(peer.uid)"])
            throw VarlinkError(SessionInterface.LoginStateMismatch(flowId: request.flowId))
        }
    }

    /// Signs in with a password the caller read (never on argv); the access log records who did.
    func passwordLogin(_ request: SessionInterface.PasswordLogin.Request, call: DaemonCall) throws -> Answer<SessionInterface.PasswordLogin.Reply> {
        .later { try await self.passwordLogin(request, peer: call.peer) }
    }

    private func passwordLogin(_ request: SessionInterface.PasswordLogin.Request, peer: PeerCredentials) async throws -> SessionInterface.PasswordLogin.Reply {
        let service = request.service
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        let result = try await sessions.signInWithPassword(PasswordSignIn(
            service: service, account: account, settings: try ProviderSettings(wire: request.provider), email: request.email,
            password: request.password, create: request.create ?? false))
        logger.info("signed in with a password", metadata: ["uid": "\(peer.uid)"])
        return SessionInterface.PasswordLogin.Reply(session: .init(result.status), account: result.key.account)
    }

    func cancelLogin(_ request: SessionInterface.CancelLogin.Request, call: DaemonCall) throws -> Answer<SessionInterface.CancelLogin.Reply> {
        .now(SessionInterface.CancelLogin.Reply(cancelled: sessions.cancelSignIn(request.flowId, owner: call.peer.uid)))
    }

    /// Ends the caller's uid's sign-ins (of a service, when named) whose service the policy lets
    /// this caller `session.login`, whichever of the user's programs began them.
    func cancelLogins(_ request: SessionInterface.CancelLogins.Request, call: DaemonCall) throws -> Answer<SessionInterface.CancelLogins.Reply> {
        let service = request.service, peer = call.peer
        let cancelled = sessions.cancelSignIns(owner: peer.uid) { pending in
            (service == nil || Array(pending.utf8) == Array(service!.utf8)) && access.allows(peer, SessionInterface.CancelLogins.operation, service: pending)
        }
        logger.info("sign-ins cancelled", metadata: ["uid": "\(peer.uid)", "count": "\(cancelled)"])
        return .now(SessionInterface.CancelLogins.Reply(cancelled: Int64(cancelled)))
    }

    /// Streams events until the client goes away. The first reply ("watching") tells the client
    /// that it is subscribed, so nothing that happens after it is missed.
    func watch(_ request: SessionInterface.Watch.Request, call: DaemonCall) throws -> Answer<SessionInterface.Watch.Reply> {
        guard call.more else { throw VarlinkError.expectedMore }
        return .later { try await self.watch(request, context: call.context) }
    }

    private func watch(_ request: SessionInterface.Watch.Request, context: VarlinkCallContext) async throws -> SessionInterface.Watch.Reply {
        let service = request.service
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        let peer = context.peer
        let events = sessions.events()
        let watching = SessionInterface.Watch.Reply(
            event: .init(kind: .watching, service: service ?? "", account: account ?? "", at: clock.now.timeIntervalSince1970))
        try await context.reply(.typed(watching))
        for await event in events {
            if context.isConnectionClosed { break }
            // Names compare by bytes, as everywhere (see ItemKey).
            if let service, !event.key.service.utf8.elementsEqual(service.utf8) { continue }
            if let account, !event.key.account.utf8.elementsEqual(account.utf8) { continue }
            guard access.allows(peer, SessionInterface.Watch.operation, service: event.key.service) else { continue }
            try await context.reply(.typed(SessionInterface.Watch.Reply(event: .init(event))))
        }
        return watching  // the client has gone; this final reply goes nowhere
    }
}
