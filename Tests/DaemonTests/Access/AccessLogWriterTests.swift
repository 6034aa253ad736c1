import AccessLogFile
import Foundation
import Testing
import Varlink
import VaultPolicy
import VaultTesting
@testable import VaultDaemon

/// One writer puts the access log's lines on disk, in order, off the caller's thread, in batches
/// (one wake-up and one write per 100 ms window, not per line); a line it cannot write is counted,
/// never dropped silently.
@Suite(.timeLimit(.minutes(20))) struct AccessLogWriterTests {
    static let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 42, executable: "/usr/bin/curl")

    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("sv-writer-\(UUID().uuidString.prefix(8))").path
    }

    static func lines(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func linesAreWrittenInTheOrderTheCallsGaveThemAndFlushReturnsOnceTheyAre() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = AccessLog(destination: .file(try RotatingLogFile(path: directory + "/access.log", maxBytes: 1 << 24)),
                            clock: ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000)))
        for index in 0..<500 {
            log.record(Self.peer, operation: "retrieve", service: "s\(index)", decision: Decision(allowed: true, rule: nil))
        }
        await log.flush()
        let services = Self.lines(directory + "/access.log").map { $0.firstMatch(of: /service="(s[0-9]+)"/)?.1 ?? "" }
        #expect(services == (0..<500).map { "s\($0)"[...] })
        #expect(log.failedWrites == 0)
    }

    /// Allowed lines: a program's budget admits 600 of them in a burst (``AccessLogBudget``).
    static let allowed = Decision(allowed: true, rule: nil)

    static func batchedLog(_ directory: String, window: ManualSleepClock) throws -> AccessLog {
        AccessLog(destination: .file(try RotatingLogFile(path: directory + "/access.log", maxBytes: 1 << 24)),
                  clock: ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000)), batchClock: window)
    }

    /// The first line wakes the writer, which waits its window for more: nothing is on disk before
    /// the window ends, then the whole burst is, in order.
    @Test func aBurstIsWrittenTogetherWhenItsWindowEndsNotLineByLine() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let window = ManualSleepClock()
        let time = ManualClock(mirror: window.reach)
        let log = try Self.batchedLog(directory, window: window)
        log.record(Self.peer, operation: "retrieve", service: "s0", decision: Self.allowed)
        try await window.waitUntilSleeping(1, "the writer to start the batch's window")
        for index in 1..<10 {
            log.record(Self.peer, operation: "retrieve", service: "s\(index)", decision: Self.allowed)
        }
        #expect(Self.lines(directory + "/access.log").isEmpty, "a line was written before its batch's window ended")
        time.advance(by: 0.099)
        #expect(window.sleeping == 1, "the window ended before 100 ms")
        time.advance(by: 0.002)  // past 100 ms: Date's seconds are a Double
        try await waitUntil("the batch to be written") { Self.lines(directory + "/access.log").count == 10 }
        let services = Self.lines(directory + "/access.log").map { $0.firstMatch(of: /service="(s[0-9]+)"/)?.1 ?? "" }
        #expect(services == (0..<10).map { "s\($0)"[...] })
        // Idle again: the writer waits for a line, not on a timer.
        try await Task.sleep(for: .milliseconds(50))
        #expect(window.sleeping == 0 && window.sleepsStarted == 1, "an idle log armed a timer")
        #expect(log.failedWrites == 0)
        await log.close()
    }

    /// A full batch does not wait for its window, and neither does a flush.
    @Test func aFullBatchAndAFlushAreWrittenWithoutWaitingForTheWindow() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let window = ManualSleepClock()
        let log = try Self.batchedLog(directory, window: window)
        for index in 0..<AccessLog.batchLines {
            log.record(Self.peer, operation: "retrieve", service: "s\(index)", decision: Self.allowed)
        }
        try await waitUntil("the full batch to be written") { Self.lines(directory + "/access.log").count == AccessLog.batchLines }
        log.record(Self.peer, operation: "retrieve", service: "last", decision: Self.allowed)
        await log.flush()
        #expect(Self.lines(directory + "/access.log").last?.contains("service=\"last\"") == true)
        #expect(log.failedWrites == 0)
        await log.close()
    }

    @Test func aLineThatCannotBeWrittenIsCounted() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = AccessLog(destination: .file(try RotatingLogFile(path: directory + "/access.log", maxBytes: 256)),
                            clock: ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000)))
        log.record(Self.peer, operation: "retrieve", service: "com.example.api", decision: .defaultDeny)
        await log.flush()
        #expect(log.failedWrites == 0)
        // The next line passes the cap; the rotated file cannot be created where the directory was.
        try FileManager.default.removeItem(atPath: directory)
        for _ in 0..<3 { log.record(Self.peer, operation: "retrieve", service: "com.example.api", decision: .defaultDeny) }
        await log.flush()
        #expect(log.failedWrites == 3)
    }

    @Test func closeWritesWhatWasHandedOverAndLaterLinesAreCounted() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = AccessLog(destination: .file(try RotatingLogFile(path: directory + "/access.log", maxBytes: 1 << 20)),
                            clock: ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000)))
        log.record(Self.peer, operation: "status", service: nil, decision: .defaultDeny)
        await log.close()
        #expect(Self.lines(directory + "/access.log").count == 1)
        log.record(Self.peer, operation: "status", service: nil, decision: .defaultDeny)
        await log.flush()
        #expect(log.failedWrites == 1)
        #expect(Self.lines(directory + "/access.log").count == 1)
    }
}
