import AccessLogFile
import Foundation
import Testing
import Varlink
import VaultPolicy
import VaultTesting
@testable import VaultDaemon

/// One writer puts the access log's lines on disk, in order, off the caller's thread; a line it
/// cannot write is counted, never dropped silently.
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
