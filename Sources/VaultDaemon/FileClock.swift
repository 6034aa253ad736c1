import Foundation
import VaultCore

/// Test hook: a clock whose "now" is the number (seconds since 1970) in a file, so a test can move a
/// daemon process's time without sleeping. Only `sortedvault daemon --unsafe-clock-file PATH` uses it.
/// An unreadable file stops the daemon rather than silently falling back to the real time.
public struct FileClock: VaultClock {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    public var now: Date {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8),
              let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            fatalError("the test clock file \(path) is missing or does not hold a number")
        }
        return Date(timeIntervalSince1970: seconds)
    }
}
