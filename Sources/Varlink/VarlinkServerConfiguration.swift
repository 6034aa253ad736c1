/// The limits a ``VarlinkServer`` enforces on every connection.
///
/// ```swift
/// var configuration = VarlinkServerConfiguration()
/// configuration.idleTimeout = .seconds(10)
/// ```
///
/// Every limit exists so that one misbehaving client cannot starve the others; do not raise them
/// without a reason.
public struct VarlinkServerConfiguration: Sendable {
    /// The largest message, in bytes without the terminating NUL. A longer message gets a
    /// `FrameTooLarge` error reply and the connection is closed. It is also the read budget of a
    /// connection: the server buffers at most one frame of this size (plus one read) per connection,
    /// and reads nothing more while a whole frame waits for its turn.
    public var maxFrameBytes = 1 << 20
    /// The deepest JSON nesting accepted in a message.
    public var maxDepth = 64
    /// Connections one uid may hold open at once; more are refused at accept time.
    public var maxConnectionsPerUID = 64
    /// Connections one process (one pid) may hold open at once.
    public var maxConnectionsPerProcess = 32
    /// Connections all processes of one executable (per uid) may hold open at once.
    public var maxConnectionsPerExecutable = 56
    /// The last of a uid's ``maxConnectionsPerUID`` slots that only a process holding no
    /// connection yet may take: however many connections one app holds, another app still gets in.
    /// nil = an eighth of ``maxConnectionsPerUID``; never more than ``maxConnectionsPerUID`` − 1.
    public var connectionsReservedForNewProcesses: Int? = nil
    /// Connections the whole server holds open at once; more are refused at accept time.
    public var maxConnections = 1024
    /// How long a connection may stay with no request being handled before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// Decides from the kernel-reported peer whether to serve a connection at all (the daemon asks
    /// its access policy). A refused connection gets one `org.varlink.service.PermissionDenied`
    /// error and is closed before anything it sent is read.
    public var admit: @Sendable (PeerCredentials) -> Bool = { _ in true }
    /// Whether a new connection's peer needs its supplementary groups (``PeerCredentials/groups``,
    /// one `/proc/PID/status` read per connection), asked at each accept: the daemon reads them only
    /// while its policy has a rule that names groups. Without them a peer's `groups` is nil.
    public var readsGroups: @Sendable () -> Bool = { true }

    public init() {}
}
