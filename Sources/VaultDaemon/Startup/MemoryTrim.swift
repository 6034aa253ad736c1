import CLinuxShims
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import ServiceLifecycle

/// Gives the heap's free pages back to the kernel once the daemon has gone quiet after work.
///
/// glibc keeps memory freed by a burst (a `List` of 10,000 items, 64 concurrent stores) in its
/// arenas, and trims only the top of each heap by itself; `malloc_trim(0)` also releases the free
/// pages inside them, so a burst does not leave the daemon's resident memory raised for good
/// (`./scripts/bench` measures it: docs/speed.md). The service sleeps until a request arrives
/// (``ActivityClock`` signals it), then until `quiet` has passed since the last request on the
/// daemon's injected clock, and trims once: no timer runs while the daemon is idle.
struct MemoryTrim: Service {
    let activity: ActivityClock
    var quiet: Duration = .seconds(2)
    let sleeper: any Clock<Duration>
    /// What a trim does; tests count the calls.
    var trim: @Sendable () -> Void = { _ = sortedvault_malloc_trim() }

    /// Unmaps the pages of code and constants (of the daemon's binary and its libraries) that the
    /// daemon mapped; a page used again is mapped again, by a minor fault from the page cache.
    /// Called once start-up is over (``DaemonParts``): what only start-up ran (argument parsing,
    /// policy and database set-up, resuming the stored logins, the runtime's first conformance
    /// scans) then no longer counts in the daemon's resident memory. Only once, not after every
    /// quiet spell as the heap trim is: the first call after each would fault its code in again.
    @discardableResult
    static func releaseCodePages() -> Int {
        Int(sortedvault_release_code_pages())
    }

    func run() async throws {
        await cancelWhenGracefulShutdown { [self] in
            // The last request a trim already followed: a signal left from before that trim (it came
            // while the service was waiting out the quiet time) is not a new burst.
            var trimmedAfter: Date?
            var requests = activity.requests.makeAsyncIterator()
            while !Task.isCancelled {
                await requests.next()  // a request came: wait until `quiet` after the last one
                if let trimmedAfter, activity.lastTouch <= trimmedAfter { continue }
                // Sleep, not a wait on the signal: requests during the quiet time only move the last
                // touch, checked on waking, so a busy daemon pays no task wake-up per request.
                while !Task.isCancelled {
                    let remaining = Double(quiet.components.seconds) - activity.secondsSinceLastTouch()
                    if remaining <= 0 { break }
                    try? await sleeper.sleep(for: .seconds(remaining))
                }
                guard !Task.isCancelled else { return }
                trimmedAfter = activity.lastTouch
                trim()
            }
        }
    }
}
