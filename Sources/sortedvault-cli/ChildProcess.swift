import FoundationEssentials
import Synchronization
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// The command `sortedvault exec` runs: spawned with our environment plus one variable, default
/// signal dispositions and an empty mask, and sent the termination signals we receive, so that
/// killing `sortedvault exec` ends the command and then the token file.
enum ChildProcess {
    /// The running child's pid for the signal handler (0 before it starts).
    private static let child = Atomic<Int32>(0)
    /// A forwarded signal that arrived before the child existed.
    private static let pendingSignal = Atomic<Int32>(0)
    static let forwardedSignals: [Int32] = [SIGTERM, SIGINT, SIGHUP, SIGQUIT]

    /// Starts `argv` (searched in PATH) with `extra` added to the environment.
    static func spawn(_ argv: [String], extra: [String: String]) throws -> pid_t {
        for number in forwardedSignals {
            signal(number) { received in
                let pid = ChildProcess.child.load(ordering: .sequentiallyConsistent)
                if pid > 0 { kill(pid, received) } else { ChildProcess.pendingSignal.store(received, ordering: .sequentiallyConsistent) }
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in forwardedSignals + [SIGPIPE] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var environment = ProcessInfo.processInfo.environment
        for (name, value) in extra { environment[name] = value }
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid = pid_t()
        let status = posix_spawnp(&pid, argv[0], nil, &attributes, cArguments, cEnvironment)
        guard status == 0 else {
            throw VaultError.invalidArgument("cannot run \(argv[0]): \(String(cString: strerror(status)))")
        }
        child.store(pid, ordering: .sequentiallyConsistent)
        let early = pendingSignal.exchange(0, ordering: .sequentiallyConsistent)
        if early != 0 { kill(pid, early) }
        return pid
    }

    /// Waits for the child on a thread of its own; the exit status, or 128 + signal.
    static func wait(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            DetachedThread.start {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }
        }
    }
}
