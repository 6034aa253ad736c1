import Foundation
import Logging
import Varlink
import VaultCore
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

    func handle(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> [String: JSONValue] {
        let peer = context.peer
        do {
            switch call.member {
            case "Save": return try await save(call, peer: peer)
            case "AutoLogin":
                let key = try authorized(call, peer, "session.autologin")
                return SessionWireFormat.encode(try await sessions.autoLogin(key))
            case "Refresh":
                let key = try authorized(call, peer, "session.refresh")
                return SessionWireFormat.encode(try await sessions.refresh(key))
            case "Logout":
                let key = try authorized(call, peer, "session.logout")
                let result = try await sessions.logout(key)
                logger.info("logged out", metadata: ["uid": "\(peer.uid)", "revoked": "\(result.revoked)"])
                return SessionWireFormat.encode(result)
            case "Status":
                let key = try authorized(call, peer, "session.status")
                return ["session": SessionWireFormat.encode(try await sessions.status(key))]
            case "List": return try await list(call, peer: peer)
            case "Watch": return try await watch(call, context: context)
            default: throw VarlinkError.methodNotFound(call.method)
            }
        } catch let error as VaultError {
            throw SessionWireFormat.encode(error, key: try? Parameters(call).optionalKey())
        }
    }

    /// The fast path: AutoLogin of a login whose access token is still valid, answered on the
    /// connection's event loop (``SessionManager/autoLoginNow(_:)``); everything else goes to `handle`.
    /// The policy is checked (and the decision recorded) only once the answer is known, as in `handle`.
    func handleOnLoop(_ call: VarlinkCall, context: VarlinkCallContext) throws -> [String: JSONValue]? {
        guard call.member == "AutoLogin", let key = try? Parameters(call).key(),
              access.allows(context.peer, "session.autologin", service: key.service),
              let result = sessions.autoLoginNow(key)
        else { return nil }
        _ = try authorized(call, context.peer, "session.autologin")
        return SessionWireFormat.encode(result)
    }

    /// The call's login key, once the policy allows `operation` on its service.
    private func authorized(_ call: VarlinkCall, _ peer: PeerCredentials, _ operation: String) throws -> ItemKey {
        let key = try Parameters(call).key()
        try access.require(peer, operation, service: key.service, interface: name)
        activity.touch()
        return key
    }

    /// The logins whose service the policy lets this caller `session.list`; never their tokens.
    private func list(_ call: VarlinkCall, peer: PeerCredentials) async throws -> [String: JSONValue] {
        let service = try Parameters(call).optionalName("service")
        try access.require(peer, "session.list", service: service, interface: name)
        activity.touch()
        let entries = try await sessions.list(service: service).filter {
            access.allows(peer, "session.list", service: $0.service)
        }
        return SessionWireFormat.encode(entries)
    }

    private func save(_ call: VarlinkCall, peer: PeerCredentials) async throws -> [String: JSONValue] {
        let key = try authorized(call, peer, "session.save")
        guard let object = call.parameters["tokenResponse"]?.objectValue else {
            throw VaultError.invalidArgument("tokenResponse must be the provider's token response, as a JSON object")
        }
        let settings = try SessionWireFormat.decodeProviderSettings(call.parameters["provider"])
        let response = try TokenResponse(object: object, kind: settings.kind)
        var lifetime: TimeInterval?
        if let seconds = try call.optionalInt("maxLifetimeSeconds") { lifetime = TimeInterval(seconds) }
        let status = try await sessions.save(response, settings: settings, for: key, maximumLifetime: lifetime)
        logger.info("login saved", metadata: ["uid": "\(peer.uid)"])
        return ["session": SessionWireFormat.encode(status)]
    }

    /// Streams events until the client goes away. The first reply ("watching") tells the client
    /// that it is subscribed, so nothing that happens after it is missed.
    private func watch(_ call: VarlinkCall, context: VarlinkCallContext) async throws -> [String: JSONValue] {
        guard call.more else { throw VarlinkError.expectedMore }
        let parameters = Parameters(call)
        let service = try parameters.optionalName("service")
        let account = try parameters.optionalName("account")
        let peer = context.peer
        try access.require(peer, "session.watch", service: service, interface: name)
        let events = await sessions.events()
        let watching: JSONValue = .object([
            "kind": "watching", "service": .string(service ?? ""), "account": .string(account ?? ""),
            "at": .double(clock.now.timeIntervalSince1970),
        ])
        try await context.reply(["event": watching])
        for await event in events {
            if context.isConnectionClosed { break }
            // Names compare by bytes, as everywhere (see ItemKey).
            if let service, !event.key.service.utf8.elementsEqual(service.utf8) { continue }
            if let account, !event.key.account.utf8.elementsEqual(account.utf8) { continue }
            guard access.allows(peer, "session.watch", service: event.key.service) else { continue }
            try await context.reply(["event": SessionWireFormat.encode(event)])
        }
        return ["event": watching]  // the client has gone; this final reply goes nowhere

    }
}
