/// Who is asking: the credentials the kernel reports for a socket peer (`SO_PEERCRED`).
///
/// ```swift
/// let peer = PeerIdentity(uid: cred.uid, gid: cred.gid, executable: try? readlink("/proc/\(pid)/exe"))
/// ```
///
/// Do not fill `executable` or `groups` from anything the client says about itself; pass `nil`
/// when the kernel cannot tell. A peer with an unknown executable matches only rules without
/// `executables`; a peer with unknown supplementary groups matches every deny rule with `gids`
/// (fail closed) and allow rules with `gids` by its effective gid only.
public struct PeerIdentity: Sendable, Hashable {
    public let uid: UInt32
    /// The effective gid.
    public let gid: UInt32
    /// The supplementary groups (`/proc/PID/status`, `Groups:`), or `nil` when unknown.
    public let groups: [UInt32]?
    /// Absolute path of the peer's executable, or `nil` when unknown.
    public let executable: String?

    public init(uid: UInt32, gid: UInt32, groups: [UInt32]? = [], executable: String?) {
        self.uid = uid
        self.gid = gid
        self.groups = groups
        self.executable = executable
    }
}
