import CoreMetrics
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

/// What a session manager reports through swift-metrics, to whatever backend the daemon
/// bootstrapped (a Prometheus exporter) or the factory a test passes. Names and dimensions carry
/// no login's names and no token.
///
/// - `sortedvault_refreshes_total{outcome}`: refresh requests made, by what came of them:
///   `refreshed`, `offline`, `reauthRequired`, `superseded` (a logout, a new sign-in or another
///   manager came first), `failed` (the provider refused the client, or the store failed);
/// - `sortedvault_fenced_commits_total`: refreshed tokens a newer lease or a logout kept from
///   being stored (they were revoked instead);
/// - `sortedvault_logins_in_doubt`, `sortedvault_revocations_pending`, `sortedvault_revocations_stuck`,
///   `sortedvault_revocation_oldest_seconds`: the store's numbers, set at every round of the
///   background work.
struct SessionMetrics: Sendable {
    let factory: any MetricsFactory

    func refresh(_ outcome: String) {
        Counter(label: "sortedvault_refreshes_total", dimensions: [("outcome", outcome)], factory: factory).increment()
    }

    func fencedCommit() {
        Counter(label: "sortedvault_fenced_commits_total", factory: factory).increment()
    }

    func record(_ backlog: RevocationBacklog, loginsInDoubt: Int) {
        Gauge(label: "sortedvault_logins_in_doubt", factory: factory).record(loginsInDoubt)
        Gauge(label: "sortedvault_revocations_pending", factory: factory).record(backlog.pending)
        Gauge(label: "sortedvault_revocations_stuck", factory: factory).record(backlog.stuck)
        Gauge(label: "sortedvault_revocation_oldest_seconds", factory: factory).record(backlog.oldestAge ?? 0)
    }
}
