import FoundationEssentials
import Logging
import NIOPosix
import Varlink
import Vault
import VaultAPI
import VaultCore
import VaultCrypto
import VaultPolicy
import VaultClient
import VaultSecretService
import VaultSession

/// The daemon's `org.sortedvault.vault` interface: the methods' bodies. The generated dispatcher
/// (``VaultInterfaceServer``) checks each call against the access policy before its body runs,
/// and answers with the interface's own errors.
final class VaultService: VaultInterfaceServer {
    /// The local vault; nil for a fleet daemon (`backend = "postgresql"`), whose store has no lock,
    /// passphrase or key slots (those calls answer `Unsupported`).
    let vault: EncryptedVault?
    /// Where item calls go: the vault itself, the desktop keyring behind the vault's lock, or the fleet's database.
    let items: any TokenStore
    /// The vault, when it holds the items itself: its immediate reads may answer item calls.
    private let immediateReads: EncryptedVault?
    /// Where the logins (and sortedvault's other own records) live: the vault, or the fleet's database.
    var ownRecords: any TokenStore { vault ?? items }
    /// The items are kept apart from the logins (in the desktop keyring), so they are listed on their own.
    var itemsApart: Bool { vault != nil && immediateReads == nil }
    let access: AccessControl
    private let throttle: UnlockThrottle
    let activity: ActivityClock
    private let settings: DaemonSettings
    private let logger: Logger
    private let onUnlock: @Sendable () -> Void
    private let unlockWithoutPassphrase: NonInteractiveUnlock?
    /// When the daemon started, on its clock: `status` reports the uptime.
    let clock: any VaultClock
    /// Where a backup is sealed (scrypt): the daemon's blocking pool, one backup at a time.
    let threadPool: NIOThreadPool
    let exportTurn = KeyedLock<Int>()
    private let startedAt: Date

    /// - Parameter onUnlock: runs after every successful unlock (the session manager resumes its work).
    init(vault: EncryptedVault?, items: any TokenStore, access: AccessControl, throttle: UnlockThrottle, activity: ActivityClock,
         settings: DaemonSettings, keyFilePath: String, keyring: SecretServiceKeySource, clock: any VaultClock,
         threadPool: NIOThreadPool, sleeper: any Clock<Duration> = ContinuousClock(),
         logger: Logger, onUnlock: @escaping @Sendable () -> Void = {}) {
        self.vault = vault
        self.clock = clock
        self.threadPool = threadPool
        startedAt = clock.now
        self.items = items
        immediateReads = vault.flatMap { (items as? EncryptedVault) === $0 ? $0 : nil }
        self.access = access
        self.throttle = throttle
        self.activity = activity
        self.settings = settings
        self.logger = logger
        self.onUnlock = onUnlock
        unlockWithoutPassphrase = vault.map { vault in
            var unlock = NonInteractiveUnlock(vault: vault, keyFilePath: keyFilePath, keyring: keyring)
            unlock.sleeper = sleeper
            return unlock
        }
    }

    /// The key of an item call; sortedvault's own records (logins) are not items a client may touch.
    func clientKey(_ name: VaultInterface.ItemName) throws -> ItemKey {
        let key = try name.key()
        if key.isReserved { throw Self.reserved }
        return key
    }

    /// An item call's service, checked before the policy: sortedvault's own records are refused,
    /// except to a listing, which shows none of them.
    func checkedService(_ name: String, parameter: String, method: String) throws -> String {
        let service = try VaultInterface.ItemName.checked(name, parameter: parameter)
        if method != VaultInterface.Method.list.rawValue, service.utf8.starts(with: ItemKey.reservedServicePrefix.utf8) {
            throw Self.reserved
        }
        return service
    }

    static var reserved: VaultError {
        .invalidArgument("services starting with \"\(ItemKey.reservedServicePrefix)\" are reserved for sortedvault's own records; logins are reached through `sortedvault session` (org.sortedvault.session)")
    }

    // MARK: Items

    func store(_ request: VaultInterface.Store.Request, call: DaemonCall) throws -> Answer<NoParameters> {
        let key = try clientKey(.init(service: request.service, account: request.account))
        let options = try request.options()
        return .completing { try await self.store(request, key: key, options: options) }
    }

    private func store(_ request: VaultInterface.Store.Request, key: ItemKey, options: StoreOptions) async throws {
        var options = options
        if request.keep == true, request.label == nil || request.attributes == nil || request.expires == nil,
           let stored = try await items.list(service: key.service).first(where: { $0.key == key }) {
            // What the call does not give, the replaced item keeps (read before the write: a store
            // racing this one on the same item may win either way, as two stores always could).
            options = try StoreOptions(label: request.label ?? stored.label,
                                       attributes: request.attributes ?? stored.attributes,
                                       expiresAt: request.expires == nil ? stored.expiresAt : options.expiresAt)
        }
        try await items.store(request.secret, for: key, options: options)
    }

    func retrieve(_ request: VaultInterface.ItemName, call: DaemonCall) throws -> Answer<VaultInterface.Retrieve.Reply> {
        let key = try clientKey(request)
        let reply = { @Sendable (item: RetrievedItem) in VaultInterface.Retrieve.Reply(secret: item.secret, item: .init(item.metadata)) }
        if let item = try immediateReads?.retrieveNow(key) { return .now(reply(item)) }
        return .later { reply(try await self.items.retrieve(key)) }
    }

    func delete(_ request: VaultInterface.ItemName, call: DaemonCall) throws -> Answer<NoParameters> {
        let key = try clientKey(request)
        return .completing { try await self.items.delete(key) }
    }

    /// Whether the item exists: the service's metadata, never a secret. The policy asks "list" for
    /// the service, because the answer tells what that service's listing tells.
    func exists(_ request: VaultInterface.Exists.Request, call: DaemonCall) throws -> Answer<VaultInterface.Exists.Reply> {
        let key = try clientKey(.init(service: request.service, account: request.account))
        let reply = { @Sendable (items: [ItemMetadata]) in VaultInterface.Exists.Reply(exists: items.contains { $0.key == key }) }
        if let items = try immediateReads?.listNow(service: key.service) { return .now(reply(items)) }
        return .later { reply(try await self.items.list(service: key.service)) }
    }

    func list(_ request: VaultInterface.List.Request, call: DaemonCall) throws -> Answer<VaultInterface.List.Reply> {
        let service = request.service
        let peer = call.peer
        // Without a service filter, show only the services this caller may list.
        let reply = { @Sendable [access] (items: [ItemMetadata]) in
            let visible = items.filter { !$0.key.isReserved && access.allows(peer, VaultInterface.List.operation, service: $0.service) }
            return VaultInterface.List.Reply(items: visible.map(VaultInterface.Item.init))
        }
        if let items = try immediateReads?.listNow(service: service) { return .now(reply(items)) }
        return .later { reply(try await self.items.list(service: service)) }
    }

    /// The pseudonyms the logs write for the services this caller may list, with their names:
    /// the items and logins of the vault or the fleet's database (items kept in the desktop keyring are listed too).
    func logNames(_ request: NoParameters, call: DaemonCall) throws -> Answer<VaultInterface.LogNames.Reply> {
        .later { try await self.logNames(peer: call.peer) }
    }

    private func logNames(peer: PeerCredentials) async throws -> VaultInterface.LogNames.Reply {
        guard let key = access.names.currentKey() else { throw VaultError.locked }
        var services = Set<String>()
        for item in try await ownRecords.list(service: nil) {
            if item.service.hasPrefix(SessionItems.sessionPrefix) {
                services.insert(String(item.service.dropFirst(SessionItems.sessionPrefix.count)))
            } else if !item.key.isReserved {
                services.insert(item.service)
            }
        }
        if itemsApart {
            for item in try await items.list(service: nil) { services.insert(item.service) }
        }
        var names: [String: String] = [:]
        for service in services where access.allows(peer, VaultInterface.LogNames.operation, service: service) {
            names[LogNames.pseudonym(service, key: key)] = service
        }
        return VaultInterface.LogNames.Reply(names: names)
    }

    // MARK: Vault state

    /// Status is not activity: it does not hold off the auto-lock. Unlocked, it answers now from the
    /// immediate reads; while locked (the row count) or when those cannot answer, in a task.
    func status(_ request: NoParameters, call: DaemonCall) throws -> Answer<VaultInterface.Status.Reply> {
        let peer = call.peer
        guard let vault else {
            // A fleet daemon: never locked, opened by the fleet's key file.
            return .later {
                let own = try await self.items.list(service: nil)
                var reply = self.statusReply(peer: peer, locked: false, keySources: ["keyfile"], own: own, rowsWhileLocked: 0)
                // A fleet's revocations wait in the outbox the daemons share, not among the items.
                if let outbox = self.items as? any RevocationOutbox {
                    reply.queuedRevocations = Int64(try await outbox.revocationBacklog(stuckAfter: .max).pending)
                }
                return reply
            }
        }
        if !vault.isLockedNow, let keySources = try? vault.keySourceKindsNow(), let own = try? vault.listNow(service: nil) {
            return .now(statusReply(peer: peer, locked: false, keySources: keySources, own: own, rowsWhileLocked: 0))
        }
        return .later {
            let locked = await vault.isLocked
            let keySources = try await vault.keySourceKinds()
            let own: [ItemMetadata]?
            do {
                own = try await vault.list(service: nil)
            } catch let error as VaultError where error.code == .locked {
                own = nil
            }
            let rows = own == nil ? try await vault.itemCount() : 0
            return self.statusReply(peer: peer, locked: locked, keySources: keySources, own: own, rowsWhileLocked: rows)
        }
    }

    /// The Status reply. With the vault's own items (`own`), the items `List` would show this caller
    /// and sortedvault's own records apart; while locked (nil: sealed names cannot be told apart),
    /// the row count. Items in the desktop keyring (backend = "secret-service") are not counted: the
    /// keyring may hang.
    func statusReply(peer: PeerCredentials, locked: Bool, keySources: [String], own: [ItemMetadata]?,
                     rowsWhileLocked: Int) -> VaultInterface.Status.Reply {
        var reply = VaultInterface.Status.Reply(
            locked: locked, keySources: keySources, items: Int64(rowsWhileLocked),
            version: SortedVaultVersion.current, autoLockMinutes: Int64(settings.autoLockMinutes))
        let policy = access.policySource.snapshot
        reply.pid = Int64(getpid())
        reply.uptimeSeconds = Int64(max(0, clock.now.timeIntervalSince(startedAt)).rounded(.down))
        reply.policyFiles = access.policySource.files
        reply.policyReloads = Int64(policy.reloads)
        reply.policyError = policy.error
        reply.accessLogFailedWrites = access.accessLog.map { Int64($0.failedWrites) }
        if let own {
            reply.items = Int64(own.filter { !$0.key.isReserved && access.allows(peer, VaultInterface.List.operation, service: $0.service) }.count)
            reply.logins = Int64(own.filter { $0.service.hasPrefix(SessionItems.sessionPrefix) }.count)
            reply.queuedRevocations = Int64(own.filter { $0.service == SessionItems.revocationService }.count)
        }
        return reply
    }

    /// With a passphrase: one throttled attempt of this peer. Without: the vault's key file or
    /// keyring key, read afresh (after a `lock` or an auto-lock), unthrottled — nothing is guessed.
    /// (The policy is checked before the passphrase is even decoded: the method acts on the whole vault.)
    func unlock(_ request: VaultInterface.Unlock.Request, call: DaemonCall) throws -> Answer<NoParameters> {
        let vault = try localVault("unlock")
        return .completing { try await self.unlock(vault, passphrase: request.passphrase, peer: call.peer) }
    }

    private func unlock(_ vault: EncryptedVault, passphrase: SecureBytes?, peer: PeerCredentials) async throws {
        guard let passphrase else {
            if await vault.isLocked, let unlockWithoutPassphrase {
                let kind: String
                do {
                    kind = try await unlockWithoutPassphrase.unlock()
                } catch let error as VaultError where error.code == .invalidArgument {
                    throw VarlinkError(VaultInterface.InvalidParameter(parameter: "passphrase", reason: error.reason))
                }
                logger.info("vault unlocked", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "source": "\(kind)"])
                onUnlock()
            }
            return
        }
        try await throttled(peer, VaultInterface.Unlock.operation) {
            try await vault.unlock(.passphrase(passphrase))
        }
        logger.info("vault unlocked", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
        onUnlock()
    }

    /// Runs one passphrase check as a reserved attempt of `peer`: refused with `TooManyAttempts`
    /// while the peer must wait or has another attempt in flight, so parallel calls cannot all
    /// reach the (one-at-a-time) key derivation.
    private func throttled(_ peer: PeerCredentials, _ operation: String, _ check: () async throws -> Void) async throws {
        let who = UnlockThrottle.Peer(uid: peer.uid, pid: peer.pid)
        guard let attempt = throttle.reserve(for: who) else {
            throw VarlinkError(VaultInterface.TooManyAttempts(retryAfterSeconds: throttle.retryAfter(for: who)))
        }
        do {
            try await check()
            throttle.settle(attempt, succeeded: true)
        } catch let error as VaultError where error.code == .wrongPassphrase {
            throttle.settle(attempt, succeeded: false)
            logger.warning("wrong passphrase", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)", "operation": "\(operation)"])
            access.accessLog?.recordFailure(peer, operation: operation, reason: "wrong passphrase")
            throw error
        } catch {
            throttle.release(attempt)
            throw error
        }
    }

    func lock(_ request: NoParameters, call: DaemonCall) throws -> Answer<NoParameters> {
        let vault = try localVault("lock")
        return .completing {
            await vault.lock()
            self.logger.info("vault locked", metadata: ["uid": "\(call.peer.uid)", "pid": "\(call.peer.pid)"])
        }
    }

    /// The local vault, for the calls only it has; a fleet daemon answers them `Unsupported`.
    private func localVault(_ operation: String) throws -> EncryptedVault {
        guard let vault else { throw VarlinkError(VaultInterface.Unsupported(reason: FleetDatabaseSettings.noLocalVault(operation))) }
        return vault
    }

    func changePassphrase(_ request: VaultInterface.ChangePassphrase.Request, call: DaemonCall) throws -> Answer<NoParameters> {
        guard request.new.count > 0 else { throw VaultError.invalidArgument("the new passphrase must not be empty") }
        let vault = try localVault("change the passphrase of")
        let peer = call.peer
        return .completing {
            try await self.throttled(peer, VaultInterface.ChangePassphrase.operation) {
                try await vault.changePassphrase(from: request.old, to: request.new)
            }
            self.logger.info("passphrase changed", metadata: ["uid": "\(peer.uid)", "pid": "\(peer.pid)"])
        }
    }
}

/// The version reported by `Status` and `GetInfo`.
public enum SortedVaultVersion {
    public static let current = "0.1.0"
}

#if canImport(Glibc)
import Glibc
#endif
