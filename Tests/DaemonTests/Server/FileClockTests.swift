import Foundation
import Testing
@testable import VaultDaemon

/// The daemon's test clock file fails closed: a bad file refuses the start, and a file that goes
/// bad later leaves the time where it was, never a crash and never the real time.
@Suite(.timeLimit(.minutes(20))) struct FileClockTests {
    static func file(_ text: String?) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sv-clock-\(UUID().uuidString.prefix(8))").path
        if let text { try text.write(toFile: path, atomically: true, encoding: .utf8) }
        return path
    }

    @Test(arguments: [nil, "", "soon", "nan", "1e400"])
    func aFileWithoutANumberRefusesTheClock(_ text: String?) throws {
        let path = try Self.file(text)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: DaemonError.self) { try FileClock(path: path) }
    }

    @Test func aFileThatGoesBadLeavesTheTimeWhereItWas() throws {
        let path = try Self.file("1800000000\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let clock = try FileClock(path: path)
        try "1800000060".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(clock.now == Date(timeIntervalSince1970: 1_800_000_060))
        try "garbage".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(clock.now == Date(timeIntervalSince1970: 1_800_000_060))
        try FileManager.default.removeItem(atPath: path)
        #expect(clock.now == Date(timeIntervalSince1970: 1_800_000_060))
    }
}
