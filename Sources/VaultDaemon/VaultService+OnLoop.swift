import Varlink
import VaultAPI
import VaultCore
import VaultPolicy
import VaultProtocol

/// The fast path of `org.sortedvault.vault`: Retrieve, List and Status answered on the connection's event
/// loop from the vault's lock-protected read view and one prepared SQLite read (``EncryptedVault/retrieveNow(_:)``),
/// when the vault itself holds the items (not the desktop keyring). Anything it cannot answer at once
/// goes to ``VaultService/handle(_:context:)`` as before.
extension VaultService {
    func handleOnLoop(_ call: VarlinkCall, context: VarlinkCallContext) throws -> VarlinkReply? {
        guard itemsAreInVault else { return nil }
        let peer = context.peer
        let parameters = WireParameters(call)
        do {
            switch call.member {
            case "Retrieve":
                let key = try clientKey(.init(from: parameters))
                guard let item = try onLoop(peer, "retrieve", service: key.service, { try vault.retrieveNow(key) }) else { return nil }
                return .typed(VaultInterface.Retrieve.Reply(secret: item.secret, item: .init(item.metadata)))
            case "List":
                let request = try VaultInterface.List.Request(from: parameters)
                let service = try request.service.map { try VaultInterface.ItemName.checked($0, parameter: "service") }
                guard let items = try onLoop(peer, "list", service: service, { try vault.listNow(service: service) }) else { return nil }
                let visible = items.filter { !$0.key.isReserved && access.allows(peer, "list", service: $0.service) }
                return .typed(VaultInterface.List.Reply(items: visible.map(VaultInterface.Item.init)))
            case "Status":
                // Unlocked only: while locked the count comes from the async path. Status is not
                // activity (it does not hold off the auto-lock), as on the async path.
                guard let reply = try onLoop(peer, "status", service: nil, touch: false, { () -> VaultInterface.Status.Reply? in
                    guard !vault.isLockedNow, let kinds = try? vault.keySourceKindsNow(),
                          let own = try? vault.listNow(service: nil) else { return nil }
                    return statusReply(peer: peer, locked: false, keySources: kinds, own: own, rowsWhileLocked: 0)
                }) else { return nil }
                return .typed(reply)
            default:
                return nil
            }
        } catch let error as WireParameterError {
            throw VarlinkError(error, interface: name)
        } catch let error as VaultError {
            throw VaultWireError.encode(error, key: try? VaultInterface.ItemName(from: parameters).key())
        }
    }

    /// Runs `read` when the policy allows the call, then records that one decision as
    /// ``AccessControl/require(_:_:service:interface:)`` does: when `read` cannot answer (nil),
    /// nothing is recorded here and the async path records it. A denied call also goes there, to be
    /// refused and logged.
    private func onLoop<T>(_ peer: PeerCredentials, _ operation: String, service: String?, touch: Bool = true,
                           _ read: () throws -> T?) throws -> T? {
        let decision = access.decide(peer, operation, service: service)
        guard decision.allowed else { return nil }
        let result = Result { try read() }
        if case .success(nil) = result { return nil }
        try access.enforce(decision, peer, operation, service: service)
        if touch { activity.touch() }
        return try result.get()
    }
}
