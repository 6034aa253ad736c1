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

/// The daemon's `org.sortedvault.session` interface: checks each call against the access policy
/// (operations `session.*`, for the caller's service), validates it, and hands it to the one
/// ``SessionManager`` that owns every login — which is what makes refresh single-flight across all
/// clients and processes.
final class SessionService: VarlinkInterface {
    let name = SessionInterfaceDescription.name
    let interfaceDescription = SessionInterfaceDescription.text

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

    /// The client secret and API key of Save, diverted from the frame into secure memory.
    var secretParameters: VarlinkSecretParameters? { .decoding(SessionInterface.callSecrets) }

    /// One body per method. AutoLogin of a login whose access token is still valid answers now
    /// (``SessionManager/autoLoginNow(_:)``); everything else, and an AutoLogin that must refresh,
    /// is a task, answered within ``AnswerDeadline`` (`offline` "ask again" past it, while the
    /// refresh goes on), so the client, which waits longer, always hears from the daemon.
    func handle(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkAnswer {
        let peer = context.peer
        return try .daemon(call, interface: name, encode: { SessionWireError.encode($0, key: $1) }) {
            (method: SessionInterface.Method, parameters) in
            switch method {
            case .save:
                let request = try SessionInterface.Save.Request(from: parameters)
                return .task { try await self.save(request, peer: peer) }
            case .autoLogin:
                let key = try authorized(.init(from: parameters), peer, "session.autologin")
                if let result = sessions.autoLoginNow(key) { return .reply(.typed(SessionInterface.LoginOutcome(result))) }
                return .task { .typed(SessionInterface.LoginOutcome(try await self.answerDeadline.bounded { try await self.sessions.autoLogin(key) })) }
            case .refresh:
                let key = try authorized(.init(from: parameters), peer, "session.refresh")
                return .task { .typed(SessionInterface.LoginOutcome(try await self.answerDeadline.bounded { try await self.sessions.refresh(key) })) }
            case .logout:
                let key = try authorized(.init(from: parameters), peer, "session.logout")
                return .task {
                    let result = try await self.sessions.logout(key)
                    self.logger.info("logged out", metadata: ["uid": "\(peer.uid)", "revoked": "\(result.revoked)"])
                    return .typed(SessionInterface.Logout.Reply(wasLoggedIn: result.wasLoggedIn, revoked: result.revoked,
                                                                revocationQueued: result.revocationQueued,
                                                                providerCannotRevoke: result.providerCannotRevoke))
                }
            case .fleetRevoke:
                let request = try SessionInterface.FleetRevoke.Request(from: parameters)
                let service = try VaultInterface.ItemName.checked(request.service, parameter: "service")
                try access.require(peer, "fleet.revoke", service: service, interface: name)
                activity.touch()
                return .task {
                    let result = try await self.sessions.logoutAll(service: service)
                    self.logger.notice("logged out every login of a service", metadata: [
                        "uid": "\(peer.uid)", "loggedOut": "\(result.loggedOut)", "revocationsQueued": "\(result.revocationsQueued)",
                    ])
                    return .typed(SessionInterface.FleetRevoke.Reply(result))
                }
            case .fleetStatus:
                try access.require(peer, "fleet.status", service: nil, interface: name)
                return .task { .typed(SessionInterface.FleetStatus.Reply(try await self.sessions.fleetStatus())) }
            case .fleetRewrap:
                let request = try SessionInterface.FleetRewrap.Request(from: parameters)
                let batchSize = request.batchSize.map { Int(clamping: $0) } ?? Self.rewrapBatchSize
                try access.require(peer, "fleet.rewrap", service: nil, interface: name)
                activity.touch()
                return .task { try await self.rewrap(batchSize: batchSize, peer: peer) }
            case .status:
                let key = try authorized(.init(from: parameters), peer, "session.status")
                return .task { .typed(SessionInterface.Status.Reply(session: .init(try await self.sessions.status(key)))) }
            case .list:
                let request = try SessionInterface.List.Request(from: parameters)
                return .task { try await self.list(request, peer: peer) }
            case .watch:
                let request = try SessionInterface.Watch.Request(from: parameters)
                return .task { try await self.watch(request, more: call.more, context: context) }
            case .beginLogin:
                let request = try SessionInterface.BeginLogin.Request(from: parameters)
                return .task { try await self.beginLogin(request, peer: peer) }
            case .completeLogin:
                let request = try SessionInterface.CompleteLogin.Request(from: parameters)
                return .task { try await self.completeLogin(request, peer: peer) }
            case .cancelLogin:
                let request = try SessionInterface.CancelLogin.Request(from: parameters)
                return .task { try await self.cancelLogin(request, peer: peer) }
            case .cancelLogins:
                let request = try SessionInterface.CancelLogins.Request(from: parameters)
                return .task { try await self.cancelLogins(request, peer: peer) }
            case .restore: return try restore(.init(from: parameters), peer: peer)
            case .passwordLogin:
                let request = try SessionInterface.PasswordLogin.Request(from: parameters)
                return .task { try await self.passwordLogin(request, peer: peer) }
            }
        }
    }

    /// The call's login key, once the policy allows `operation` on its service.
    private func authorized(_ name: SessionInterface.LoginName, _ peer: PeerCredentials, _ operation: String) throws -> ItemKey {
        let key = try name.key()
        try access.require(peer, operation, service: key.service, interface: self.name)
        activity.touch()
        return key
    }

    /// Rows per transaction of a rewrap when the caller names none: few enough that a batch's locks
    /// are short for the readers and writers beside it.
    static let rewrapBatchSize = 500

    /// The fleet's rewrap (``SessionManager/rewrapDataKeys(batchSize:)``); `Unsupported` for a store with no data keys.
    private func rewrap(batchSize: Int, peer: PeerCredentials) async throws -> VarlinkReply {
        guard let result = try await sessions.rewrapDataKeys(batchSize: batchSize) else {
            throw VarlinkError(SessionInterface.Unsupported(reason: "not a fleet store: this daemon keeps a one-host vault, sealed under its master key, which has no data keys to rewrap (`sortedvault change-passphrase` changes the key that wraps it); rewrap runs on a daemon with backend = \"postgresql\""))
        }
        logger.notice("rewrapped the fleet's store", metadata: [
            "uid": "\(peer.uid)", "keyID": "\(result.keyID)", "rows": "\(result.rows)", "retired": "\(result.retiredKeyIDs)",
        ])
        return .typed(SessionInterface.FleetRewrap.Reply(result))
    }

    /// The logins whose service the policy lets this caller `session.list`; never their tokens.
    private func list(_ request: SessionInterface.List.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        let service = try request.service.map { try VaultInterface.ItemName.checked($0, parameter: "service") }
        try access.require(peer, "session.list", service: service, interface: name)
        activity.touch()
        let entries = try await sessions.list(service: service).filter {
            access.allows(peer, "session.list", service: $0.service)
        }
        return .typed(SessionInterface.List.Reply(logins: entries.map(SessionInterface.Login.init)))
    }

    private func save(_ request: SessionInterface.Save.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        let key = try authorized(.init(service: request.service, account: request.account), peer, "session.save")
        let settings = try ProviderSettings(wire: request.provider)
        let response = try TokenResponse(object: request.tokenResponse, tokens: request.tokens, kind: settings.kind)
        let lifetime = request.maxLifetimeSeconds.map { TimeInterval($0) }
        let status = try await sessions.save(response, settings: settings, for: key, maximumLifetime: lifetime)
        logger.info("login saved", metadata: ["uid": "\(peer.uid)"])
        return .typed(SessionInterface.Save.Reply(session: .init(status)))
    }

    /// Begins a sign-in the daemon runs; the access log records who began it (operation session.login).
    private func beginLogin(_ request: SessionInterface.BeginLogin.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        let service = try VaultInterface.ItemName.checked(request.service, parameter: "service")
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        try access.require(peer, "session.login", service: service, interface: name)
        activity.touch()
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
            return .typed(SessionInterface.BeginLogin.Reply(flowId: start.flowID, authorizationUrl: start.authorizationURL.absoluteString,
                                                            expiresAt: start.expiresAt.timeIntervalSince1970))
        }
        return .typed(SessionInterface.BeginLogin.Reply(
            flowId: start.flowID, userCode: device.userCode, verificationUri: device.verificationURI.absoluteString,
            verificationUriComplete: device.verificationURIComplete?.absoluteString, intervalSeconds: Int64(device.interval),
            expiresAt: start.expiresAt.timeIntervalSince1970))
    }

    /// Completes a sign-in of this caller's uid: policy session.login on its service, then the
    /// manager's checks (state, code exchange, id token with nonce) and the save.
    private func completeLogin(_ request: SessionInterface.CompleteLogin.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        if let service = await sessions.signInService(request.flowId, owner: peer.uid) {
            try access.require(peer, "session.login", service: service, interface: name)
        }
        activity.touch()
        do {
            let result = try await sessions.completeSignIn(request.flowId, callbackQuery: request.callbackQuery, owner: peer.uid)
            logger.info("sign-in completed", metadata: ["uid": "\(peer.uid)"])
            return .typed(SessionInterface.CompleteLogin.Reply(session: .init(result.status), service: result.key.service, account: result.key.account))
        } catch let error as VaultError where error.code == .callbackMismatch {
            logger.notice("a sign-in callback with the wrong state was ignored", metadata: ["uid": "\(peer.uid)"])
            throw VarlinkError(SessionInterface.LoginStateMismatch(flowId: request.flowId))
        }
    }

    /// Signs in with a password the caller read (never on argv); the access log records who did.
    private func passwordLogin(_ request: SessionInterface.PasswordLogin.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        let service = try VaultInterface.ItemName.checked(request.service, parameter: "service")
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        try access.require(peer, "session.login", service: service, interface: name)
        activity.touch()
        let result = try await sessions.signInWithPassword(PasswordSignIn(
            service: service, account: account, settings: try ProviderSettings(wire: request.provider), email: request.email,
            password: request.password, create: request.create ?? false))
        logger.info("signed in with a password", metadata: ["uid": "\(peer.uid)"])
        return .typed(SessionInterface.PasswordLogin.Reply(session: .init(result.status), account: result.key.account))
    }

    private func cancelLogin(_ request: SessionInterface.CancelLogin.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        if let service = await sessions.signInService(request.flowId, owner: peer.uid) {
            try access.require(peer, "session.login", service: service, interface: name)
        }
        activity.touch()
        return .typed(SessionInterface.CancelLogin.Reply(cancelled: await sessions.cancelSignIn(request.flowId, owner: peer.uid)))
    }

    /// Ends the caller's uid's sign-ins (of a service, when named) whose service the policy lets
    /// this caller `session.login`, whichever of the user's programs began them.
    private func cancelLogins(_ request: SessionInterface.CancelLogins.Request, peer: PeerCredentials) async throws -> VarlinkReply {
        let service = try request.service.map { try VaultInterface.ItemName.checked($0, parameter: "service") }
        try access.require(peer, "session.login", service: service, interface: name)
        activity.touch()
        let cancelled = await sessions.cancelSignIns(owner: peer.uid) { pending in
            (service == nil || Array(pending.utf8) == Array(service!.utf8)) && access.allows(peer, "session.login", service: pending)
        }
        logger.info("sign-ins cancelled", metadata: ["uid": "\(peer.uid)", "count": "\(cancelled)"])
        return .typed(SessionInterface.CancelLogins.Reply(cancelled: Int64(cancelled)))
    }

    /// Streams events until the client goes away. The first reply ("watching") tells the client
    /// that it is subscribed, so nothing that happens after it is missed.
    private func watch(_ request: SessionInterface.Watch.Request, more: Bool, context: VarlinkCallContext) async throws -> VarlinkReply {
        guard more else { throw VarlinkError.expectedMore }
        let service = try request.service.map { try VaultInterface.ItemName.checked($0, parameter: "service") }
        let account = try request.account.map { try VaultInterface.ItemName.checked($0, parameter: "account") }
        let peer = context.peer
        try access.require(peer, "session.watch", service: service, interface: name)
        let events = await sessions.events()
        let watching = SessionInterface.Watch.Reply(
            event: .init(kind: .watching, service: service ?? "", account: account ?? "", at: clock.now.timeIntervalSince1970))
        try await context.reply(.typed(watching))
        for await event in events {
            if context.isConnectionClosed { break }
            // Names compare by bytes, as everywhere (see ItemKey).
            if let service, !event.key.service.utf8.elementsEqual(service.utf8) { continue }
            if let account, !event.key.account.utf8.elementsEqual(account.utf8) { continue }
            guard access.allows(peer, "session.watch", service: event.key.service) else { continue }
            try await context.reply(.typed(SessionInterface.Watch.Reply(event: .init(event))))
        }
        return .typed(watching)  // the client has gone; this final reply goes nowhere
    }
}
