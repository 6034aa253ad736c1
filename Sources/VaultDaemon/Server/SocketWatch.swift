import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle
import VaultCore

/// Orphan detection, as gpg-agent does it: a daemon whose socket path no longer leads to it —
/// the file removed, its runtime directory deleted, another daemon bound there since — can never
/// be reached again, yet would keep the vault open forever. Every `interval` (on the daemon's
/// clock, so tests move it without waiting) the path is compared with the device and inode the
/// daemon bound; when they differ the service logs why and returns, and the daemon's service
/// group shuts down gracefully (this service's `successTerminationBehavior`).
struct SocketWatch: Service {
    let path: String
    /// The socket the server binds; the watch starts once it has.
    let bound: BoundSocket
    let interval: Duration
    /// When the checks start counting: taken before the socket served anyone, so a test that
    /// advances the clock right after start-up is never missed.
    let start: Date
    let clock: any VaultClock
    let sleeper: any Clock<Duration>
    let logger: Logger

    func run() async throws {
        let problem = await cancelWhenGracefulShutdown { [self] () async -> String? in
            for await _ in bound.settled { break }
            guard let identity = bound.current else { return nil }
            return await firstProblem(identity: identity)
        }
        guard let reason = problem else { return }
        logger.warning("\(reason): no client can reach this daemon any more, so it stops")
    }

    /// Why `path` stopped being the socket `identity`; nil when cancelled first.
    func firstProblem(identity: SocketIdentity) async -> String? {
        let step = TimeInterval(interval.components.seconds) + TimeInterval(interval.components.attoseconds) * 1e-18
        var next = start.addingTimeInterval(step)
        while !Task.isCancelled {
            let remaining = next.timeIntervalSince(clock.now)
            if remaining > 0 {
                do {
                    try await SleeperClock.sleep(for: .seconds(remaining), on: sleeper)
                } catch {
                    return nil
                }
                continue  // the clock may have been set back: look again
            }
            if let reason = Self.problem(path: path, identity: identity) { return reason }
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
            let directory = directoryOfPath(path)
            return FileManager.default.fileExists(atPath: directory)
                ? "the socket \(path) was removed"
                : "the socket directory \(directory) was deleted"
        case _?:
            return "the socket \(path) was replaced by another (a second daemon took over the path)"
        }
    }
}
