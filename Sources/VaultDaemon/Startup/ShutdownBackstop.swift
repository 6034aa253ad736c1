import FoundationEssentials
import VaultCore
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// The promise that SIGTERM ends the daemon within ``limit``, whatever is still running.
///
/// The group stops its services gracefully and cancels those still running after 10 s; then the
/// daemon closes its store. But a wait that ignores cancellation — a query on a database
/// connection that went silent, which postgres-nio does not give up until the connection dies,
/// and which the pool's shutdown then waits for — would keep the process alive, holding
/// `daemon.lock` while its socket no longer answers, so that `status` finds no daemon and a new one
/// refuses to start. When the graceful shutdown begins, this arms a timer on a thread of its own;
/// if the process still runs when it fires, it logs what happened, removes the socket (if still
/// this daemon's) and exits with status 1. Exiting releases `daemon.lock` and every other lock;
/// keys in memory go with the process.
///
/// It is the last service of the group, so the first to hear of the shutdown. The limit is real
/// time, as the shutdown's own 10 s are: it bounds a real process, not the session logic.
struct ShutdownBackstop: Service {
    /// The group's graceful limit (10 s), time for cancelled services to return, and for closing.
    static let limit: Duration = .seconds(20)

    let limit: Duration
    let logger: Logger
    /// What is done before the forced exit: remove the socket, while it is still this daemon's.
    let abandon: @Sendable () -> Void

    func run() async throws {
        // Returns when the graceful shutdown reaches this service, or throws when the group is
        // cancelled (a service failed): either way the process is on its way out.
        try? await gracefulShutdown()
        arm()
    }

    private func arm() {
        let (limit, logger, abandon) = (limit, logger, abandon)
        let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
        DetachedThread.start {
            var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
            var remaining = timespec()
            while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
            logger.critical("""
                the shutdown did not finish within \(Int(seconds)) s (a call that ignores cancellation is still \
                waiting); exiting without closing the store
                """)
            abandon()
            fflush(nil)  // every C stream: the log line above goes out before the process does
            _exit(1)
        }
    }
}

extension DaemonParts {
    /// The socket is removed (only while it is still this daemon's): the rest ends with the process.
    func abandon() {
        ListeningSocket.remove(socketPath, ifStill: bound.current)
    }
}
