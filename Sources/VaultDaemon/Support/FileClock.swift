#if DEBUG
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Test hook: a clock whose "now" is the number (seconds since 1970) in a file, so a test can move a
/// daemon process's time without sleeping. Only `sortedvault daemon --unsafe-clock-file PATH` uses
/// it, and only test (debug) builds have it.
///
/// A file that does not hold a number when the daemon starts stops the start with an error; one
/// that stops holding one later leaves the time where it last was. Never the real time instead.
public struct FileClock: VaultClock {
    public let path: String
    private let last: Locked<Date>

    public init(path: String) throws {
        guard let start = Self.read(path) else {
            throw DaemonError("the test clock file \(path) is missing or does not hold a number of seconds")
        }
        self.path = path
        last = Locked(start)
    }

    public var now: Date {
        guard let time = Self.read(path) else { return last.withLock { $0 } }
        last.withLock { $0 = time }
        return time
    }

    private static func read(_ path: String) -> Date? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let seconds = Double(text.trimmedWhitespace), seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}
#endif
