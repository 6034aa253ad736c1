import Foundation
import Logging
import Varlink
import VaultAPI
import VaultCore
import VaultPolicy
import VaultProtocol
import VaultSession

/// The daemon's `org.sortedvault.session` interface: checks each call against the access policy
/// (operations `session.*`, for the caller's service), validates it, and hands it to the one
/// ``SessionManager`` that owns every login — which is what makes refresh single-flight across all
/// clients and processes.
final class SessionService: VarlinkInterface {
    let name = SessionInterfaceDescription.name
    let interfaceDescription = SessionInterfaceDescription.text

    private let sessions: SessionManager
    private let access: AccessControl
    private let activity: ActivityClock
    private let clock: any VaultClock
    private let logger: Logger

    init(sessions: SessionManager, access: AccessControl, activity: ActivityClock, clock: any VaultClock, logger: Logger) {
        self.sessions = sessions
        self.access = access
        self.activity = activity
        self.clock = clock
        self.logger = logger
    }

    /// The client secret and API key of Save, diverted from the frame into secure memory.
    var secretParameters: VarlinkSecretParameters? { .decoding(SessionInterface.callSecrets) }

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> VarlinkReply {
        let peer = context.peer
        let parameters = WireParameters(call)
        do {
            switch call.member {
            case "Save": return try await save(.init(from: parameters), peer: peer)
            case "AutoLogin":
                let key = try authorized(.init(from: parameters), peer, "session.autologin")
                return .typed(SessionInterface.LoginOutcome(try await sessions.autoLogin(key)))
            case "Refresh":
                let key = try authorized(.init(from: parameters), peer, "session.refresh")
                return .typed(SessionInterface.LoginOutcome(try await sessions.refresh(key)))
            case "Logout":
                let key = try authorized(.init(from: parameters), peer, "session.logout")
                let result = try await sessions.logout(key)
                logger.info("logged out", metadata: ["uid": "\(peer.uid)", "revoked": "\(result.revoked)"])
                return .typed(SessionInterface.Logout.Reply(wasLoggedIn: result.wasLoggedIn, revoked: result.revoked,
                                                            revocationQueued: result.revocationQueued,
                                                            providerCannotRevoke: result.providerCannotRevoke))
            case "Status":
                let key = try authorized(.init(from: parameters), peer, "session.status")
                return .typed(SessionInterface.Status.Reply(session: .init(try await sessions.status(key))))
            case "List": return try await list(.init(from: parameters), peer: peer)
            case "Watch": return try await watch(.init(from: parameters), more: call.more, context: context)
            default: throw VarlinkError.methodNotFound(call.method)
            }
        } catch let error as WireParameterError {
            throw VarlinkError(error, interface: name)
        } catch let error as VaultError {
            throw SessionWireError.encode(error, key: try? VaultInterface.ItemName(from: parameters).key())
        }
    }

    /// The fast path: AutoLogin of a login whose access token is still valid, answered on the
    /// connection's event loop (``SessionManager/autoLoginNow(_:)``); everything else goes to `handle`.
    /// The policy is checked (and the decision recorded) only once the answer is known, as in `handle`.
    func handleOnLoop(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkReply? {
        guard call.member == "AutoLogin",
              let name = try? SessionInterface.LoginName(from: WireParameters(call)), let key = try? name.key()
        else { return nil }
        let decision = access.decide(context.peer, "session.autologin", service: key.service)
        guard decision.allowed, let result = sessions.autoLoginNow(key) else { return nil }
        try access.enforce(decision, context.peer, "session.autologin", service: key.service, interface: self.name)
        activity.touch()
        return .typed(SessionInterface.LoginOutcome(result))
    }

    /// The call's login key, once the policy allows `operation` on its service.
    private func authorized(_ name: SessionInterface.LoginName, _ peer: PeerCredentials, _ operation: String) throws -> ItemKey {
        let key = try name.key()
        try access.require(peer, operation, service: key.service, interface: self.name)
        activity.touch()
        return key
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
