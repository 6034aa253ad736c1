import VaultAPI
import VaultCrypto
import CLICore

#if canImport(Glibc)
import Glibc
#endif

/// Runs a ``HotCommand`` over an open connection: one call, one reply, the full CLI's output and
/// exit statuses. A call that changes the vault (store, delete) is sent once and its outcome
/// reported whatever happens; a read (retrieve, autologin) whose connection closes before any
/// answer is handed over to the full CLI, which reconnects once as `VaultClient` always did.
enum HotCall {
    static let vault = "org.sortedvault.vault."
    static let session = "org.sortedvault.session."

    static func run(_ command: HotCommand, over connection: WireConnection) throws(WireFailure) {
        switch command.verb {
        case .retrieve:
            let request = VaultInterface.ItemName(service: command.service, account: command.account)
            let frame = try exchange(VarlinkWire.encodeCall(VaultInterface.Retrieve.self, request), over: connection, mayHandOver: true)
            let reply = try WireReply.decode(VaultInterface.Retrieve.self, frame, errors: WireFailure.vault)
            StandardStreams.writeToStandardOutput(reply.secret)
        case .store:
            let secret = try SecretInput.secretToStore(prompt: "Secret for \(command.service)/\(command.account): ")
            let request = VaultInterface.Store.Request(
                service: command.service, account: command.account, secret: secret, label: command.label,
                attributes: command.attributes.isEmpty ? nil : Dictionary(command.attributes) { _, last in last },
                expires: command.expiresIn.map { now() + $0 }, keep: true)
            let frame = try exchange(VarlinkWire.encodeCall(VaultInterface.Store.self, request), over: connection, mayHandOver: false)
            _ = try WireReply.decode(VaultInterface.Store.self, frame, errors: WireFailure.vault)
        case .delete:
            let request = VaultInterface.ItemName(service: command.service, account: command.account)
            let frame = try exchange(VarlinkWire.encodeCall(VaultInterface.Delete.self, request), over: connection, mayHandOver: false)
            _ = try WireReply.decode(VaultInterface.Delete.self, frame, errors: WireFailure.vault)
        case .autoLogin:
            let request = SessionInterface.LoginName(service: command.service, account: command.account)
            let frame = try exchange(VarlinkWire.encodeCall(SessionInterface.AutoLogin.self, request), over: connection, mayHandOver: true)
            try AutoLoginOutcome.report(WireReply.decode(SessionInterface.AutoLogin.self, frame, errors: WireFailure.session))
        case .status:
            let frame = try exchange(VarlinkWire.encodeCall(VaultInterface.Status.self, NoParameters()), over: connection, mayHandOver: true)
            let status = try WireReply.decode(VaultInterface.Status.self, frame, errors: WireFailure.vault)
            let lines = StatusReport.lines(
                locked: status.locked, items: Int(status.items), logins: status.logins.map { Int($0) },
                queuedRevocations: status.queuedRevocations.map { Int($0) }, keySources: status.keySources,
                autoLockMinutes: Int(status.autoLockMinutes), version: status.version, socket: connection.path,
                pid: status.pid.map { Int($0) }, uptimeSeconds: status.uptimeSeconds.map { Int($0) },
                policyFiles: status.policyFiles, policyError: status.policyError,
                accessLogFailedWrites: status.accessLogFailedWrites.map { Int($0) })
            for line in lines { print(line) }
        }
    }

    /// Sends `frame` and waits for the reply; a read whose connection closed unanswered is handed over.
    private static func exchange(_ frame: WireBytes, over connection: WireConnection,
                                 mayHandOver: Bool) throws(WireFailure) -> WipedBuffer {
        do {
            try connection.send(frame)
            return try connection.receiveFrame()
        } catch {
            if mayHandOver, error == .closed { HandOver.toFullCLI() }
            throw WireFailure.transport(error, socketPath: connection.path)
        }
    }

    /// Seconds since 1970, as `Date()` reads them.
    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
    }
}
