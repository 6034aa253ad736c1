import AccessLogFile
import Foundation
import Testing
import Varlink
import VaultPolicy
import VaultTesting
@testable import VaultDaemon

/// The access log's line is written on every call, so it is formatted without `Date.formatted` and
/// `debugDescription` on the request path; these tests hold it to the text those gave.
@Suite(.timeLimit(.minutes(20))) struct AccessLogLineTests {
    @Test(arguments: [
        "com.example.api", "/usr/bin/curl", "", "a b", "quote\"d", "back\\slash", "tab\there", "new\nline",
        "nul\u{0}", "del\u{7F}", "caf\u{E9}", "\u{212A}elvin", "emoji \u{1F511}",
    ])
    func aFieldWithoutInvisibleCharactersIsQuotedAsDebugDescriptionQuotesIt(_ text: String) {
        #expect(AccessLog.quoted(text) == text.debugDescription)
    }

    /// What `debugDescription` let through raw: C1 controls (NEL ends a line for some readers, CSI
    /// starts a terminal command), bidirectional overrides and isolates, line and paragraph
    /// separators, zero-width characters.
    @Test(arguments: [
        ("nel\u{85}x", "\"nel\\u{85}x\""), ("csi\u{9B}31m", "\"csi\\u{9B}31m\""), ("esc\u{1B}[2J", "\"esc\\u{1B}[2J\""),
        ("rlo\u{202E}gnp.exe", "\"rlo\\u{202E}gnp.exe\""), ("lri\u{2066}x\u{2069}", "\"lri\\u{2066}x\\u{2069}\""),
        ("ls\u{2028}ps\u{2029}", "\"ls\\u{2028}ps\\u{2029}\""), ("zw\u{200B}j", "\"zw\\u{200B}j\""),
        ("/tmp/x\n2026-01-01T00:00:00Z allowed uid=0", "\"/tmp/x\\n2026-01-01T00:00:00Z allowed uid=0\""),
    ])
    func invisibleAndControlCharactersAreEscaped(_ text: String, _ expected: String) {
        let quoted = AccessLog.quoted(text)
        #expect(quoted == expected)
        #expect(quoted.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F || $0.properties.isAlphabetic })
    }

    @Test func aLineStartsWithTheSecondInTheISO8601FormOfDateFormatted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-log-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = ManualClock(start: Date(timeIntervalSince1970: 1_800_000_000.75))
        let log = AccessLog(destination: .file(try RotatingLogFile(path: directory + "/access.log", maxBytes: 1 << 20)), clock: clock)
        let peer = PeerCredentials(uid: 1000, gid: 1000, pid: 42, executable: "/usr/bin/curl")
        var expected: [String] = []
        for step in [0.0, 0.2, 1.0, 86_399.0, 3_000_000.0] {
            clock.advance(by: step)
            log.record(peer, operation: "retrieve", service: "com.example.api", decision: .defaultDeny)
            expected.append(clock.now.formatted(.iso8601)
                + " denied uid=1000 gid=1000 pid=42 exe=\"/usr/bin/curl\" operation=\"retrieve\" service=\"com.example.api\""
                + " decision=\"denied: no rule matches (default deny)\"")
        }
        await log.flush()
        let lines = try String(contentsOfFile: directory + "/access.log", encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines == expected)
    }
}
