/// The text of the shipped `policy/` files, used when no policy directory is configured.
///
/// Byte-identical to `policy/access.toml` and `policy/settings.toml`; a test compares them, so edit
/// both together.
enum BuiltInFiles {
    static let accessName = "built-in access.toml"
    static let settingsName = "built-in settings.toml"

    static let access = #"""
    # Who may do what. Default deny: a request no rule allows is refused. Deny wins over allow.
    [[rule]]
    name = "owner-full-access"
    effect = "allow"
    uids = ["@self"]          # "@self" = the uid the daemon runs as; or numbers; "*" = any uid
    operations = ["*"]
    services = ["*"]          # glob patterns: * matches any run of characters, ? one character

    """#

    static let settings = #"""
    # sortedvault daemon settings.
    auto_lock_minutes = 0            # lock after this many idle minutes; 0 = never (the default)
    idle_connection_timeout_seconds = 60
    max_connections_per_uid = 64
    max_connections_per_process = 32      # one process (pid) may hold this many connections
    max_connections_per_executable = 56   # all processes of one executable together may hold this many
    # reserved_connections_for_new_processes = 8    # the last slots of a uid, only for processes holding none yet; default: an eighth of max_connections_per_uid
    backend = "embedded"             # where items live: "embedded" (sortedvault's encrypted store), "secret-service" (the desktop keyring), or "postgresql" (fleet mode, with a [postgresql] table: docs/fleet.md)
    [session]
    min_valid_seconds = 60           # auto-login returns a cached access token only if it stays valid this long
    proactive_refresh_seconds = 60   # the daemon refreshes logins this long before min_valid is crossed; 0 = only on request
    device_flow = true               # false: refuse `session login --flow device` (RFC 8628), for users who fear its phishing risk
    # [metrics]                      # off by default: serve GET /metrics (Prometheus) to this host only
    # listen = "127.0.0.1:9464"      # a loopback address, or "unix:/run/sortedvault/metrics.sock" (docs/daemon.md, Metrics)

    """#
}

extension Policy {
    /// The shipped default: the daemon's own uid may do everything, every other uid nothing.
    public static func builtInDefault(daemonUID: UInt32) -> Policy {
        do {
            return try parse(BuiltInFiles.access, file: BuiltInFiles.accessName, daemonUID: daemonUID)
        } catch {
            preconditionFailure("the built-in access policy does not parse: \(error)")
        }
    }
}
