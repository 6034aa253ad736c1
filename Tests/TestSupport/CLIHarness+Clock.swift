import Foundation
import VaultTesting

extension CLIHarness {
    /// Where ``manualClock(start:)`` writes the time, for `sortedvault daemon --unsafe-clock-file`.
    public var clockFile: String { root + "/clock" }

    /// A manual clock whose every change is written to ``clockFile``: a daemon started with
    /// `--unsafe-clock-file` reads its time there and its timers (auto-lock, the socket check)
    /// fire when the test advances it — no real waiting.
    public func manualClock(start: Date = Date()) -> ManualClock {
        let file = clockFile
        return ManualClock(start: start) { date in
            try? "\(date.timeIntervalSince1970)".write(toFile: file, atomically: true, encoding: .utf8)
        }
    }

    /// Polls `condition` every 10 ms for at most `timeout` of real time (a hang guard; a busy
    /// machine has kept a process from reacting for over a minute): for waiting on another process to
    /// react, never for letting time pass.
    public static func eventually(within timeout: TimeInterval = 600, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        repeat {
            if try condition() { return true }
            usleep(10_000)
        } while Date() < deadline
        return try condition()
    }
}
