import Testing
import CLICore

/// The lines of `sortedvault status` that only appear when something needs the owner's attention.
@Suite(.timeLimit(.minutes(20))) struct StatusReportTests {
    private func lines(accessLogFailedWrites: Int?) -> [String] {
        StatusReport.lines(locked: false, items: 1, logins: 0, queuedRevocations: 0, keySources: ["keyfile"],
                           autoLockMinutes: 0, version: "1", socket: "/run/s", accessLogFailedWrites: accessLogFailedWrites)
    }

    @Test func lostAccessLogLinesAreReportedAndNoneIsSilence() {
        #expect(lines(accessLogFailedWrites: 3).contains { $0.hasPrefix("access log: 3 lines could not be written") })
        #expect(!lines(accessLogFailedWrites: 0).contains { $0.hasPrefix("access log:") })
        #expect(!lines(accessLogFailedWrites: nil).contains { $0.hasPrefix("access log:") })
    }
}
