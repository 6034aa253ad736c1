import ServiceLifecycle

/// Writes the access log's pending summaries (``AccessLogBudget``) once a minute, so a flood that
/// stopped is reported without waiting for that program's next line. Sleeps on the daemon's
/// injected `sleeper` (a test moves it with the clock file); the daemon writes what is left at shutdown.
struct AccessLogSummaries: Service {
    let log: AccessLog
    let sleeper: any Clock<Duration>
    static let interval: Duration = .seconds(60)

    func run() async throws {
        try? await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                try await SleeperClock.sleep(for: Self.interval, on: sleeper)
                log.flushSummaries(olderThan: 60)
            }
        }
    }
}
