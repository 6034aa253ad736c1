import FoundationEssentials
import Logging
import ServiceLifecycle
import Varlink
import Vault
import VaultCore
import VaultPolicy
import VaultClient
import VaultOAuthHTTP
import VaultOIDC
import VaultSQLite
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// What `sortedvault daemon` needs to run.
public struct DaemonConfiguration: Sendable {
    public var paths: VaultPaths
    public var clock: any VaultClock
    /// A listening socket handed over by systemd (`LISTEN_FDS`), used instead of binding.
    public var inheritedListener: CInt?
    /// What the daemon's timers (auto-lock, the session work loop, the socket check) sleep on; tests
    /// pass a ``FileSleepClock``, so they move the timers with the clock file and never wait.
    public var sleeper: any Clock<Duration>
    /// What bounds the daemon's answer to a session call (``AnswerDeadline``): real time, as the
    /// client's wait it must come before is; never the clock file.
    public var answerClock: any Clock<Duration> = ContinuousClock()
    /// How often the daemon checks that its socket path still leads to it (see ``SocketWatch``).
    public var socketCheckInterval: Duration
    /// The access log file's cap; it is rotated once (to `access.log.1`) past it.
    public var accessLogMaxBytes = 1 << 20
    /// How a fleet's store opens (`sortedvault-fleet-daemon`); nil in `sortedvault-cli`, which
    /// then throws ``FleetProgramNeeded`` for settings with `backend = "postgresql"`.
    public var openFleet: FleetOpener?

    public init(paths: VaultPaths, clock: any VaultClock = SystemClock(), inheritedListener: CInt? = nil,
                sleeper: any Clock<Duration> = ContinuousClock(), socketCheckInterval: Duration = .seconds(60)) {
        self.paths = paths
        self.clock = clock
        self.inheritedListener = inheritedListener
        self.sleeper = sleeper
        self.socketCheckInterval = socketCheckInterval
    }

    /// The descriptor systemd passed, if this process was socket-activated (sd_listen_fds(3)).
    public static func systemdListener(environment: [String: String] = ProcessInfo.processInfo.environment) -> CInt? {
        guard let pid = environment["LISTEN_PID"].flatMap(Int32.init), pid == getpid(),
              let count = environment["LISTEN_FDS"].flatMap(Int.init), count >= 1 else { return nil }
        return 3  // SD_LISTEN_FDS_START
    }
}

/// The per-user daemon: one process that owns the vault file and serves it on a Unix socket.
///
/// Start-up fails closed: a bad policy, an unsafe socket directory, a missing key file or a damaged
/// database stops it with an error that names the file. Then its parts run as services of one
/// `ServiceGroup` (swift-service-lifecycle): the keyring unlock, the session work loop, auto-lock,
/// the socket watch and the socket server. SIGTERM and SIGINT, or the socket watch finding the
/// socket gone, shut the group down gracefully, server first; then the socket is removed, the keys
/// zeroed and the database closed, and `run` returns. Whatever still runs 20 s after the shutdown
/// began (a call that ignores cancellation), the process exits (``ShutdownBackstop``).
public enum Daemon {
    /// Runs until SIGTERM or SIGINT, or until its socket path no longer leads to it, then shuts down cleanly.
    public static func run(_ configuration: DaemonConfiguration, logger: Logger) async throws {
        try ProcessHardening.apply()
        DescriptorLimit.raiseToHardLimit(logger: logger)
        // The parts' blocking work runs on this one pool, shut down after `close()`.
        try await BlockingWork.withThreadPool { threadPool in
            let daemon = try await DaemonParts.open(configuration, threadPool: threadPool, logger: logger)
            var services = daemon.services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) }
            if let watch = daemon.socketWatch {
                services.insert(ServiceGroupConfiguration.ServiceConfiguration(
                    service: watch, successTerminationBehavior: .gracefullyShutdownGroup), at: services.count - 1)
            }
            // Last, so the first to hear of a shutdown: whatever still runs after its limit, the process exits.
            services.append(ServiceGroupConfiguration.ServiceConfiguration(
                service: ShutdownBackstop(limit: ShutdownBackstop.limit, logger: logger, abandon: { daemon.abandon() })))
            var group = ServiceGroupConfiguration(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
            // A service that does not stop within this is cancelled; one that ignores cancellation meets the backstop.
            group.maximumGracefulShutdownDuration = .seconds(10)
            do {
                try await ServiceGroup(configuration: group).run()
            } catch {
                await daemon.close()
                throw error
            }
            await daemon.close()
        }
    }
}
