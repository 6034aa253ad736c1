import CLinuxShims
import Foundation
import Testing
@testable import VaultDaemon

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's calls into the C shims (CLinuxShims), made in this process so that
/// `scripts/sanitizers address` runs them under AddressSanitizer: the release of code pages walks
/// every loaded object's program headers and dynamic section, the heap trim runs, and the dumpable
/// flag reads back. (Making the process non-dumpable is left to the daemon's own tests:
/// `ProcessHygieneTests` checks it on the daemon process; here it would change the test process.)
@Suite(.timeLimit(.minutes(20))) struct LinuxShimTests {
    @Test func codePagesAreReleasedInWholePagesAndTheCodeStillRuns() {
        let page = sysconf(Int32(_SC_PAGESIZE))
        let released = MemoryTrim.releaseCodePages()
        // The test binary alone has megabytes of read-only code, all of it advisable.
        #expect(released >= page * 16, "released \(released) bytes")
        #expect(released % page == 0, "released \(released) bytes, not whole pages of \(page)")
        // The released pages fault back in from the files: the code (and this shim) runs again.
        #expect(MemoryTrim.releaseCodePages() >= page * 16)
    }

    @Test func theHeapTrimRunsAfterABurstIsFreed() {
        var blocks: [UnsafeMutableRawPointer] = []
        for size in stride(from: 64, through: 64 * 1024, by: 64) { blocks.append(malloc(size)!) }
        for block in blocks { free(block) }
        let trimmed = sortedvault_malloc_trim()
        #expect(trimmed == 0 || trimmed == 1, "malloc_trim answered \(trimmed)")
    }

    @Test func aTestProcessIsDumpableUntilHardened() {
        #expect(sortedvault_get_dumpable() == 1)
        #expect(!ProcessHardening.isNonDumpable)
    }
}
