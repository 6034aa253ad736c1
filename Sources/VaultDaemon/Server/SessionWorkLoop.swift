import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import Logging
import ServiceLifecycle
import Synchronization
import VaultCore
import VaultSession

/// Drives the session manager's background work — resuming stored logins once the vault is open,
/// proactive refresh, wiping logins that ended, retrying queued revocations — by sleeping until its
/// next deadline, as ssh-agent's reaper does, rather than polling. The schedule lives in
/// ``SessionManager`` (driven by tests with a manual clock); this service only sleeps, on the
/// daemon's injected `sleeper`, at most a minute at a time so a changed wall clock is noticed, and
/// wakes early whenever the schedule changes or the vault is unlocked.
///
/// A graceful shutdown cancels the loop between rounds or in its sleep.
final class SessionWorkLoop: Service, Sendable {
    private let sessions: SessionManager
    /// Whether the store holding the logins is locked (a local vault can be; a fleet's database cannot).
    private let storeIsLocked: @Sendable () async -> Bool
    private let clock: any VaultClock
    private let sleeper: any Clock<Duration>
    private let logger: Logger
    /// Yields when the schedule changed or the vault was unlocked, and when a wait's time is up;
    /// keeps one (several wake-ups before a wait are one).
    private let wakeUps: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let resumeRequested = Atomic(false)
    /// Runs once, after the first round (the stored logins resumed, or nothing to resume): the
    /// daemon's start-up is over then, and the daemon unmaps its code (``MemoryTrim``).
    private let startupDone: @Sendable () -> Void

    init(sessions: SessionManager, storeIsLocked: @escaping @Sendable () async -> Bool, clock: any VaultClock, sleeper: any Clock<Duration>, logger: Logger,
         startupDone: @escaping @Sendable () -> Void = {}) {
        self.startupDone = startupDone
        self.sessions = sessions
        self.storeIsLocked = storeIsLocked
        self.clock = clock
        self.sleeper = sleeper
        self.logger = logger
        (wakeUps, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// The vault was unlocked (by a client, the keyring or the key file): the loop resumes the
    /// stored logins — finishes interrupted logouts, schedules refreshes — on its next round, at once.
    func vaultUnlocked() {
        resumeRequested.store(true, ordering: .releasing)
        wake.yield()
    }

    func run() async throws {
        sessions.observeSchedule { [wake] in wake.yield() }
        if !(await storeIsLocked()) { resumeRequested.store(true, ordering: .releasing) }
        await cancelWhenGracefulShutdown { [self] in await loop() }
    }

    private func loop() async {
        var firstRound = true
        var wakeUps = self.wakeUps.makeAsyncIterator()
        while !Task.isCancelled {
            if resumeRequested.exchange(false, ordering: .acquiringAndReleasing) { await resume() }
            await sessions.runDueWork()
            if firstRound {
                firstRound = false
                startupDone()
            }
            let next = sessions.nextWakeUp()
            let seconds = next.map { $0.timeIntervalSince(clock.now) } ?? 60
            // Work still due right after a round means it could not run (the vault is locked):
            // wait for a schedule change (an unlock) instead of spinning.
            await wait(for: .seconds(seconds > 0 ? min(seconds, 60) : 30), on: &wakeUps)
        }
    }

    /// Returns on a wake-up, after `duration` on the sleeper, or on cancellation. The timer wakes
    /// the loop through the same stream, so a wait never cancels the stream's `next()` (which
    /// would end the stream).
    private func wait(for duration: Duration, on wakeUps: inout AsyncStream<Void>.Iterator) async {
        let (sleeper, wake) = (self.sleeper, self.wake)
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                guard (try? await SleeperClock.sleep(for: duration, on: sleeper)) != nil else { return }
                wake.yield()
            }
            _ = await wakeUps.next()
            group.cancelAll()
        }
    }

    private func resume() async {
        do {
            try await sessions.resume()
        } catch {
            logger.warning("stored logins could not be resumed; they are refreshed on demand", metadata: ["error": "\(error)"])
        }
    }
}
