/// Counts open connections and decides who may open another, so that one client cannot lock the
/// others out: limits in total, per uid, per process and per executable, and a reserve of each
/// uid's slots for processes that hold no connection yet.
///
/// ```swift
/// var limiter = ConnectionLimiter(ConnectionLimiter.Limits(configuration))
/// guard limiter.admit(peer) == nil else { refuse() }
/// // … when the connection closes:
/// limiter.release(peer)
/// ```
///
/// A process that floods can fill its own process and executable quotas but not the uid's
/// reserve, so a well-behaved app of the same user still gets in. Same-uid code that runs many
/// different executables can still use up the uid's slots: the limits contain accidents and
/// misbehaving apps, not a determined attacker running as the user.
struct ConnectionLimiter: Sendable {
    struct Limits: Sendable {
        var total: Int
        var perUID: Int
        var perProcess: Int
        var perExecutable: Int
        /// The last slots of a uid, only for processes that hold no connection yet.
        var reservedForNewProcesses: Int

        init(_ configuration: VarlinkServerConfiguration) {
            total = configuration.maxConnections
            perUID = configuration.maxConnectionsPerUID
            perProcess = configuration.maxConnectionsPerProcess
            perExecutable = configuration.maxConnectionsPerExecutable
            let reserve = configuration.connectionsReservedForNewProcesses ?? configuration.maxConnectionsPerUID / 8
            reservedForNewProcesses = max(0, min(reserve, configuration.maxConnectionsPerUID - 1))
        }
    }

    /// Which limit refused a connection, for the log.
    enum Refusal: String, Sendable {
        case total, uid, process, executable, reserve
    }

    private struct ExecutableKey: Hashable {
        let uid: UInt32
        let executable: String?
    }

    let limits: Limits
    private(set) var total = 0
    private var perUID: [UInt32: Int] = [:]
    private var perProcess: [Int32: Int] = [:]
    private var perExecutable: [ExecutableKey: Int] = [:]

    init(_ limits: Limits) {
        self.limits = limits
    }

    /// Counts a new connection from `peer`, or says which limit it would exceed.
    mutating func admit(_ peer: PeerCredentials) -> Refusal? {
        let uidCount = perUID[peer.uid, default: 0]
        let processCount = perProcess[peer.pid, default: 0]
        let executable = ExecutableKey(uid: peer.uid, executable: peer.executable)
        let executableCount = perExecutable[executable, default: 0]
        if total >= limits.total { return .total }
        if processCount >= limits.perProcess { return .process }
        if executableCount >= limits.perExecutable { return .executable }
        if uidCount >= limits.perUID { return .uid }
        if processCount > 0, uidCount >= limits.perUID - limits.reservedForNewProcesses { return .reserve }
        total += 1
        perUID[peer.uid] = uidCount + 1
        perProcess[peer.pid] = processCount + 1
        perExecutable[executable] = executableCount + 1
        return nil
    }

    /// Forgets a connection admitted earlier.
    mutating func release(_ peer: PeerCredentials) {
        total -= 1
        Self.decrement(&perUID, peer.uid)
        Self.decrement(&perProcess, peer.pid)
        Self.decrement(&perExecutable, ExecutableKey(uid: peer.uid, executable: peer.executable))
    }

    private static func decrement<Key: Hashable>(_ counts: inout [Key: Int], _ key: Key) {
        let remaining = counts[key, default: 1] - 1
        counts[key] = remaining > 0 ? remaining : nil
    }
}
