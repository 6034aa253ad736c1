import Foundation
import VaultCore

/// Orphan detection, as gpg-agent does it: a daemon whose socket path no longer leads to it —
/// the file removed, its runtime directory deleted, another daemon bound there since — can never
/// be reached again, yet would keep the vault open forever. Every `interval` (on the daemon's
/// clock, so tests move it without waiting) the path is compared with the device and inode the
/// daemon bound; when they differ the watch returns why, and the daemon shuts down cleanly.
enum SocketWatch {
    /// Returns why `path` is no longer the socket `identity`, or nil when cancelled. The checks fall
    /// every `interval` after `start` on `clock` (taken before the socket served anyone, so a test
    /// that advances the clock right after start-up is never missed); `sleeper` waits between them.
    static func run(path: String, identity: SocketIdentity, interval: Duration, since start: Date,
                    clock: any VaultClock, sleeper: any Clock<Duration>) async -> String? {
        let step = TimeInterval(interval.components.seconds) + TimeInterval(interval.components.attoseconds) * 1e-18
        var next = start.addingTimeInterval(step)
        while !Task.isCancelled {
            let remaining = next.timeIntervalSince(clock.now)
            if remaining > 0 {
                do {
                    try await sleep(on: sleeper, for: .seconds(remaining))
                } catch {
                    return nil
                }
                continue  // the clock may have been set back: look again
            }
            if let reason = problem(path: path, identity: identity) { return reason }
            next = clock.now.addingTimeInterval(step)
        }
        return nil
    }

    /// Why `path` is not (any more) the socket `identity`, or nil when it still is.
    static func problem(path: String, identity: SocketIdentity) -> String? {
        switch SocketIdentity.of(path) {
        case identity?:
            return nil
        case nil:
            let directory = (path as NSString).deletingLastPathComponent
            return FileManager.default.fileExists(atPath: directory)
                ? "the socket \(path) was removed"
                : "the socket directory \(directory) was deleted"
        case _?:
            return "the socket \(path) was replaced by another (a second daemon took over the path)"
        }
    }

    private static func sleep<C: Clock>(on clock: C, for interval: Duration) async throws where C.Duration == Duration {
        try await clock.sleep(for: interval)
    }
}
