import CLinuxShims
import ServiceLifecycle

/// Gives the heap's free pages back to the kernel once the daemon has gone quiet after work.
///
/// glibc keeps memory freed by a burst (a `List` of 10,000 items, 64 concurrent stores) in its
/// arenas, and trims only the top of each heap by itself; `malloc_trim(0)` also releases the free
/// pages inside them. Measured on the release daemon with 10,000 items: anonymous memory 15.7 MiB
/// after the `List`, 12.8 MiB after a trim (docs/speed.md, "Daemon memory"). The service sleeps
/// until a request arrives (``ActivityClock`` signals it), then until `quiet` has passed since the
/// last request on the daemon's injected clock, and trims once: no timer runs while the daemon is idle.
struct MemoryTrim: Service {
    let activity: ActivityClock
    var quiet: Duration = .seconds(2)
    let sleeper: any Clock<Duration>
    /// What a trim does; tests count the calls.
    var trim: @Sendable () -> Void = { _ = sortedvault_malloc_trim() }

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            while !Task.isCancelled {
                await activity.requests.next()  // a request came: wait until `quiet` after the last one
                while !Task.isCancelled {
                    let remaining = Double(quiet.components.seconds) - activity.secondsSinceLastTouch()
                    if remaining <= 0 { break }
                    await activity.requests.wait(for: .seconds(remaining), on: sleeper)
                }
                guard !Task.isCancelled else { return }
                trim()
            }
        }
    }
}
