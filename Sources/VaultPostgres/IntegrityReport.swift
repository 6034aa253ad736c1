import Logging

/// How the fleet store reports a row that failed its integrity check: one error line naming the
/// table and the row by its database identity (an item's or entry's lookup in hex, an entry's id, a
/// key's id) — never a name, a label or a secret, which a row that does not open cannot give anyway —
/// and one more `sortedvault_integrity_failures_total{table}`. The caller decides what happens to the
/// row (left out of a list, kept queued); the failure is never silent.
struct IntegrityReport: Sendable {
    let logger: Logger
    let metrics: DatabaseMetrics

    func failed(_ table: String, row: String, _ consequence: String) {
        logger.error("a row of the fleet database failed its integrity check (damaged or changed by hand): \(consequence)",
                     metadata: ["table": "\(table)", "row": "\(row)"])
        metrics.integrityFailure(table)
    }
}
