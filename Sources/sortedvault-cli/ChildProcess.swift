import FoundationEssentials
import Synchronization
import VaultCore

#if canImport(Glibc)
import Glibc
#endif

/// The processes the CLI starts. The command `sortedvault exec` runs (``spawn(_:extra:)``):
/// spawned with our environment plus one variable, default signal dispositions and an empty mask,
/// and sent the termination signals we receive, so that killing `sortedvault exec` ends the command
/// and then the token file. The tools an import asks (`git config`, `pass show`) run through
/// ``run(_:stdin:stdout:stderr:reading:)``.
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
                continuation.resume(returning: ChildProcess.exitStatus(ChildProcess.reap(pid)))
            }
        }
    }

    /// Blocks until the child ends; its raw wait status.
    static func reap(_ pid: pid_t) -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }

    /// The exit status in a raw wait status, or 128 + signal, as a shell reports it.
    static func exitStatus(_ waitStatus: Int32) -> Int32 {
        waitStatus & 0x7f == 0 ? (waitStatus >> 8) & 0xff : 128 + (waitStatus & 0x7f)
    }
}

extension ChildProcess {
    /// Where one of a child's standard streams goes.
    enum Stream {
        /// This process's own.
        case inherited
        /// `/dev/null`.
        case null
        /// A pipe whose read end ``run(_:stdin:stdout:stderr:reading:)`` hands to its body (standard
        /// output and error only).
        case pipe
    }

    /// Why ``run(_:stdin:stdout:stderr:reading:)`` did not start the child.
    enum StartFailure: Error {
        /// `pipe` failed.
        case noPipe
        /// `posix_spawnp` failed with this errno value.
        case notStarted(Int32)
    }

    /// Runs `argv` (searched in PATH) with this process's environment and the streams asked for,
    /// hands `body` the read ends of the piped ones (-1 for a stream that is not piped), then waits
    /// for the child; `body`'s result and the child's raw wait status (see ``exitStatus(_:)``).
    ///
    /// ```swift
    /// let shown = try ChildProcess.run(["pass", "show", name], stdin: .null, stdout: .pipe, stderr: .null) { output, _ in
    ///     try SecretInput.readAll(fd: output, limit: WireLimits.secretBytes, what: "the entry")
    /// }
    /// guard ChildProcess.exitStatus(shown.waitStatus) == 0 else { … }
    /// ```
    ///
    /// The child gets nothing but `argv` and the environment: never put a secret on `argv` (any
    /// user can read it in `/proc`); read secrets from a pipe in `body`, into secure memory. Every
    /// pipe end is close-on-exec, so no other child inherits one, and is closed when `run` returns:
    /// do not keep a descriptor past `body`. When `body` throws, the child is sent SIGTERM and
    /// waited for, and the error rethrown. Throws ``StartFailure`` when the child did not start.
    static func run<Output>(_ argv: [String], stdin: Stream, stdout: Stream, stderr: Stream,
                            reading body: (_ output: Int32, _ errors: Int32) throws -> Output)
        throws -> (output: Output, waitStatus: Int32) {
        precondition(stdin != .pipe, "a child's standard input is inherited or /dev/null")
        var output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        defer { for descriptor in output + errors where descriptor >= 0 { close(descriptor) } }
        if stdout == .pipe, pipe(&output) != 0 { throw StartFailure.noPipe }
        if stderr == .pipe, pipe(&errors) != 0 { throw StartFailure.noPipe }
        for descriptor in output + errors where descriptor >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        let streams: [(target: Int32, stream: Stream, writeEnd: Int32)] =
            [(0, stdin, -1), (1, stdout, output[1]), (2, stderr, errors[1])]
        for (target, stream, writeEnd) in streams {
            switch stream {
            case .inherited: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe: posix_spawn_file_actions_adddup2(&actions, writeEnd, target)
            }
        }
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, argv[0], &actions, nil, arguments, environ)
        // The child holds its own copies of the write ends; while ours are open, reading never ends.
        if output[1] >= 0 { close(output[1]); output[1] = -1 }
        if errors[1] >= 0 { close(errors[1]); errors[1] = -1 }
        guard spawned == 0 else { throw StartFailure.notStarted(spawned) }
        let value: Output
        do {
            value = try body(output[0], errors[0])
        } catch {
            kill(pid, SIGTERM)
            _ = reap(pid)
            throw error
        }
        return (value, reap(pid))
    }
}
