import Logging
import ServiceLifecycle
import Vault

/// Locks the vault once it has been idle for the configured minutes (`auto_lock_minutes`). Sleeps
/// on the daemon's injected `sleeper` until the next deadline instead of polling, so a test moves it
/// with the clock file (`--unsafe-clock-file`) and never waits for real minutes. A graceful shutdown
/// ends the sleep.
struct AutoLock: Service {
    let vault: EncryptedVault
    let activity: ActivityClock
    /// Idle minutes before the lock; the daemon runs no auto-lock when this is 0.
    let minutes: Int
    let sleeper: any Clock<Duration>
    let logger: Logger

    func run() async throws {
        guard minutes > 0 else { return }
        try? await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                guard let remaining = activity.secondsUntilAutoLock(idleMinutes: minutes) else { return }
                if remaining <= 0 {
                    if !(await vault.isLocked) {
                        await vault.lock()
                        logger.info("vault locked after \(minutes) idle minutes")
                    }
                    activity.touch()  // the next check is a full period away
                    continue
                }
                try await SleeperClock.sleep(for: .seconds(remaining), on: sleeper)
            }
        }
    }
}
