import AccessLogFile
import Foundation
import Testing
import Varlink
import VaultPolicy
import VaultTesting
@testable import VaultDaemon

/// The access log's line budget: a flood is counted exactly and summarised, and no
/// peer, nor many peers together, writes faster than the budget allows.
@Suite(.timeLimit(.minutes(20))) struct AccessLogBudgetTests {
    final class Files {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-budget-\(UUID().uuidString.prefix(8))").path
        var path: String { directory + "/access.log" }
        init() throws { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) }
        deinit { try? FileManager.default.removeItem(atPath: directory) }
        var lines: [String] {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    /// The counts a summary line gives: `counted="denied lock=4076, denied retrieve=3"`.
    static func counted(_ line: String) -> [String: Int] {
        guard let start = line.range(of: "counted=\"")?.upperBound, let end = line[start...].firstIndex(of: "\"") else { return [:] }
        var counts: [String: Int] = [:]
        for part in line[start..<end].split(separator: ",") {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=")
            if pair.count == 2, let value = Int(pair[1]) { counts[String(pair[0]), default: 0] += value }
        }
        return counts
    }

    @Test func aDeniedFloodIsWrittenUpToItsBurstThenCountedExactly() async throws {
        let files = try Files()
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let log = AccessLog(destination: .file(try RotatingLogFile(path: files.path, maxBytes: 1 << 24)), clock: clock)
        let app = PeerCredentials(uid: 1000, gid: 1000, pid: 42, executable: "/usr/bin/app")
        let owner = PeerCredentials(uid: 1000, gid: 1000, pid: 7, executable: "/usr/bin/sortedvault")
        log.record(owner, operation: "store", service: "com.owner", decision: Decision(allowed: true, rule: nil))
        for _ in 0..<4096 { log.record(app, operation: "lock", service: nil, decision: .defaultDeny) }
        log.record(owner, operation: "retrieve", service: "com.owner", decision: Decision(allowed: true, rule: nil))
        await log.flush()
        var lines = files.lines
        let written = lines.filter { $0.contains(" denied ") && $0.contains("\"/usr/bin/app\"") }.count
        #expect(written == Int(AccessLogBudget.denied.burst))
        #expect(lines.filter { $0.contains("service=\"com.owner\"") }.count == 2)
        // Ten seconds later the app has one more line: first the summary of what was counted.
        clock.advance(by: 10)
        log.record(app, operation: "lock", service: nil, decision: .defaultDeny)
        await log.flush()
        lines = files.lines
        let summaries = lines.filter { $0.contains(" summary uid=1000 exe=\"/usr/bin/app\"") }
        #expect(summaries.count == 1)
        #expect(summaries.first.map(Self.counted) == ["denied lock": 4096 - written], "\(summaries)")
        #expect(summaries.first?.contains("since=2027-01-15T08:00:00Z") == true, "\(summaries)")
        #expect(lines.last?.contains(" denied uid=1000 gid=1000 pid=42 exe=\"/usr/bin/app\" operation=\"lock\"") == true)
    }

    @Test func manyProgramsTogetherShareOneBudgetForRefusals() async throws {
        let files = try Files()
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        let log = AccessLog(destination: .file(try RotatingLogFile(path: files.path, maxBytes: 1 << 24)), clock: clock)
        // 1,000 copies of one program under different paths, 10 refusals each.
        for copy in 0..<1000 {
            let peer = PeerCredentials(uid: 1000, gid: 1000, pid: Int32(100 + copy), executable: "/tmp/copy-\(copy)/app")
            for _ in 0..<10 { log.record(peer, operation: "connect", service: nil, decision: .defaultDeny) }
        }
        await log.flush()
        let written = files.lines.count
        #expect(written == Int(AccessLogBudget.allDenied.burst))
        // A flush writes a bounded number of summaries; the counts, added up, are exact.
        clock.advance(by: 120)
        log.flushSummaries(olderThan: 60)
        await log.flush()
        #expect(log.failedWrites == 0)
        let summaries = files.lines.filter { $0.contains(" summary ") }
        #expect(summaries.count <= AccessLogBudget.summariesPerFlush + 1)
        #expect(summaries.last?.contains("summary uid=* exe=\"(other programs)\"") == true, "\(summaries)")
        let total = summaries.map(Self.counted).reduce(0) { $0 + $1.values.reduce(0, +) }
        #expect(total + written == 10_000)
    }

    @Test func anAllowedProgramKeepsItsBurstAndRate() throws {
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000))
        var budget = AccessLogBudget()
        let program = AccessLogBudget.Program(uid: 1000, executable: "/usr/bin/make")
        var written = 0
        for _ in 0..<1000 where budget.admit(program, allowed: true, operation: "retrieve", at: clock.now.timeIntervalSince1970).write {
            written += 1
        }
        #expect(written == Int(AccessLogBudget.allowed.burst))
        clock.advance(by: 1)
        var after = 0
        var summaries: [(index: Int, program: AccessLogBudget.Program, counted: AccessLogBudget.Suppressed)] = []
        for index in 0..<100 {
            let verdict = budget.admit(program, allowed: true, operation: "retrieve", at: clock.now.timeIntervalSince1970)
            if verdict.write { after += 1 }
            summaries += verdict.summaries.map { (index, $0.0, $0.1) }
        }
        #expect(after == Int(AccessLogBudget.allowed.perSecond))
        // The first line written after the flood carries its summary, once: the 400 lines counted.
        let summary = try #require(summaries.first, "no summary of the 400 lines counted past the burst")
        #expect(summaries.count == 1, "\(summaries.count) summaries")
        #expect(summary.index == 0 && summary.program == program, "the summary came with call \(summary.index) for \(summary.program)")
        #expect(summary.counted.counts == ["allowed retrieve": 1000 - written], "\(summary.counted.counts)")
    }

    @Test func rotationKeepsEveryLineAndDropsOnlyOldFiles() throws {
        let files = try Files()
        let file = try RotatingLogFile(path: files.path, maxBytes: 256)
        for index in 0..<100 { file.append("line \(index) " + String(repeating: "x", count: 40) + "\n") }
        var names = try FileManager.default.contentsOfDirectory(atPath: files.directory).filter { $0.hasPrefix("access.log") }
        #expect(names.count > 2)
        var all: [String] = []
        for index in stride(from: names.count - 1, through: 1, by: -1) {
            all += try String(contentsOfFile: files.path + ".\(index)", encoding: .utf8).split(separator: "\n").map(String.init)
        }
        all += files.lines
        #expect(all == (0..<100).map { "line \($0) " + String(repeating: "x", count: 40) })
        // A rotated file last written more than 90 days ago goes at the next rotation.
        let oldest = files.path + ".\(names.count - 1)"
        let old = Date().addingTimeInterval(-Double(RotatingLogFile.keepSeconds) - 86_400)
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: oldest)
        for index in 0..<6 { file.append("more \(index) " + String(repeating: "y", count: 40) + "\n") }
        names = try FileManager.default.contentsOfDirectory(atPath: files.directory).filter { $0.hasPrefix("access.log") }
        let kept = try names.filter { $0 != "access.log" }.map { name in
            try String(contentsOfFile: files.directory + "/" + name, encoding: .utf8)
        }
        #expect(!kept.contains { $0.contains("line 0 ") }, "the 90-day-old file is still there: \(names.sorted())")
        #expect(kept.contains { $0.contains("line 99 ") })
    }
}
