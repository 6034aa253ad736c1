import FoundationEssentials

/// How a ``SessionManager`` keeps logins alive: how long before expiry it refreshes, how it holds
/// back after failures, how long a refresh lease lasts and how long a revocation is retried.
public struct SessionConfiguration: Sendable {
    /// A cached access token is answered only while it stays valid at least this long.
    public var minValid: TimeInterval
    /// Proactive refresh starts this long before `minValid` would be crossed…
    public var refreshAhead: TimeInterval
    /// …minus a random part of up to this long, so logins do not refresh in step.
    public var refreshJitter: TimeInterval
    /// Hold-back of the background work (proactive refresh, queued revocations) after transient
    /// provider failures.
    public var retry: RetryPolicy
    /// The least time between two refresh attempts a client's AutoLogin makes after a failure:
    /// a client asking is otherwise never held back (a laptop back online is refreshed at once),
    /// and a burst of callers cannot hammer a failing provider.
    public var clientRetryFloor: TimeInterval
    /// A revocation that cannot reach the provider is retried for at most this long.
    public var revocationQueueLifetime: TimeInterval
    /// Whether ``runDueWork()`` refreshes logins ahead of time; when false, only callers refresh.
    public var proactiveRefresh: Bool
    /// How long a refresh lease lasts: at least twice the transport's request deadline, so a
    /// holder still waiting for its answer is never overtaken (checked by ``SessionManager/init(store:transport:clock:configuration:random:sleeper:logger:logName:metrics:)``).
    public var refreshLease: TimeInterval
    /// While another manager holds a login's lease, how often the store is read again when it
    /// gives no hint of a change (``LoginLeases/changes(of:)``).
    public var leaseRecheck: TimeInterval
    /// Whether device sign-ins (RFC 8628) may begin: an administrator who fears their phishing
    /// risk (a code the user is talked into entering) turns them off.
    public var deviceFlow: Bool
    /// After this many failed deliveries a queued revocation counts as stuck in
    /// ``SessionManager/revocationBacklog()``: still retried, and shown to the operator.
    public var revocationStuckAfter: Int

    public init(minValid: TimeInterval = 60, refreshAhead: TimeInterval = 60, refreshJitter: TimeInterval = 30,
                retry: RetryPolicy = RetryPolicy(), revocationQueueLifetime: TimeInterval = 30 * 86400,
                proactiveRefresh: Bool = true, clientRetryFloor: TimeInterval = 1,
                refreshLease: TimeInterval = 30, leaseRecheck: TimeInterval = 1, deviceFlow: Bool = true,
                revocationStuckAfter: Int = 10) {
        self.revocationStuckAfter = revocationStuckAfter
        self.deviceFlow = deviceFlow
        self.refreshLease = refreshLease
        self.leaseRecheck = leaseRecheck
        self.clientRetryFloor = clientRetryFloor
        self.proactiveRefresh = proactiveRefresh
        self.minValid = minValid
        self.refreshAhead = refreshAhead
        self.refreshJitter = refreshJitter
        self.retry = retry
        self.revocationQueueLifetime = revocationQueueLifetime
    }
}
