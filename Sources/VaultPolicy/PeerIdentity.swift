/// Who is asking: the credentials the kernel reports for a socket peer (`SO_PEERCRED`).
///
/// ```swift
/// let peer = PeerIdentity(uid: cred.uid, gid: cred.gid, executable: try? readlink("/proc/\(pid)/exe"))
/// ```
///
/// Do not fill `executable` from anything the client says about itself; pass `nil` when the
/// kernel cannot tell. A peer with an unknown executable matches only rules without `executables`.
public struct PeerIdentity: Sendable, Hashable {
    public let uid: UInt32
    public let gid: UInt32
    /// Absolute path of the peer's executable, or `nil` when unknown.
    public let executable: String?

    public init(uid: UInt32, gid: UInt32, executable: String?) {
        self.uid = uid
        self.gid = gid
        self.executable = executable
    }
}
