import BoundedJSON
import VaultCrypto
import VaultWireClient

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

    /// The socket the full CLI would use: `--socket`, else `$XDG_RUNTIME_DIR/sortedvault/socket`;
    /// nil (hand over, for the full CLI's message) when XDG_RUNTIME_DIR is unset or relative.
    static func socketPath(_ command: HotCommand) -> String? {
        if let socket = command.socket { return socket }
        guard let raw = getenv("XDG_RUNTIME_DIR") else { return nil }
        let runtime = String(cString: raw)
        guard runtime.hasPrefix("/") else { return nil }
        return runtime + "/sortedvault/socket"
    }

    static func run(_ command: HotCommand, over connection: WireConnection) throws(WireFailure) {
        switch command.verb {
        case .retrieve:
            var call = CallFrame(method: vault + "Retrieve")
            call.string("service", command.service)
            call.string("account", command.account)
            let reply = try WireReply(exchange(call.finish(), over: connection, mayHandOver: true), decodeError: WireFailure.vault)
            guard reply.has("item"), let secret = reply.secretBase64("secret") else { throw .malformed("Retrieve") }
            StandardStreams.writeToStandardOutput(secret)
        case .store:
            let secret = try StandardStreams.readSecret()
            var call = CallFrame(method: vault + "Store")
            call.string("service", command.service)
            call.string("account", command.account)
            call.secretBase64("secret", secret)
            if let label = command.label { call.string("label", label) }
            if !command.attributes.isEmpty { call.stringObject("attributes", command.attributes) }
            if let seconds = command.expiresIn { call.double("expires", now() + seconds) }
            _ = try WireReply(exchange(call.finish(), over: connection, mayHandOver: false), decodeError: WireFailure.vault)
        case .delete:
            var call = CallFrame(method: vault + "Delete")
            call.string("service", command.service)
            call.string("account", command.account)
            _ = try WireReply(exchange(call.finish(), over: connection, mayHandOver: false), decodeError: WireFailure.vault)
        case .autoLogin:
            var call = CallFrame(method: session + "AutoLogin")
            call.string("service", command.service)
            call.string("account", command.account)
            let reply = try WireReply(exchange(call.finish(), over: connection, mayHandOver: true), decodeError: WireFailure.session)
            try AutoLoginOutcome.report(reply)
        }
    }

    /// Sends `frame` and waits for the reply; a read whose connection closed unanswered is handed over.
    private static func exchange(_ frame: WipedBuffer, over connection: WireConnection,
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
