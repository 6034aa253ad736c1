import CoreMetrics

/// The fleet store's database latency through swift-metrics: `sortedvault_database_call_seconds`,
/// a timer with dimensions `kind` (`query`: one autocommit call; `transaction`: a whole
/// transaction) and `result` (`ok`, `error`: the database refused, failed or missed the deadline).
/// Measured on the store's deadline clock, so a call cut off by the deadline counts as long as
/// the deadline.
///
/// And `sortedvault_integrity_failures_total{table}`: rows of `sortedvault_items`, `sortedvault_outbox`
/// or `sortedvault_keys` that failed their integrity check when read — damaged or changed by hand
/// (docs/fleet.md). Alert on any increase.
struct DatabaseMetrics: Sendable {
    let factory: any MetricsFactory

    func integrityFailure(_ table: String) {
        Counter(label: "sortedvault_integrity_failures_total", dimensions: [("table", table)], factory: factory).increment()
    }

    func timed<T, C: Clock>(_ kind: String, on clock: C, _ call: () async throws -> T) async throws -> T where C.Duration == Duration {
        let start = clock.now
        do {
            let value = try await call()
            record(kind, "ok", start.duration(to: clock.now))
            return value
        } catch {
            record(kind, "error", start.duration(to: clock.now))
            throw error
        }
    }

    private func record(_ kind: String, _ result: String, _ elapsed: Duration) {
        let (seconds, attoseconds) = elapsed.components
        let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        Timer(label: "sortedvault_database_call_seconds", dimensions: [("kind", kind), ("result", result)], factory: factory)
            .recordNanoseconds(nanoseconds.overflow ? Int64.max : nanoseconds.partialValue + attoseconds / 1_000_000_000)
    }
}
