import CLinuxShims
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with posix_spawn and reaped with waitpid: no run loops, no signal
/// handlers, so it behaves the same in every test. Shared by the test targets that run real processes.
public struct Subprocess: Sendable {
    public let pid: pid_t

    /// Starts `argv[0]` with `environment`; `stdin`, `stdout`, `stderr` are descriptors for the child
    /// (they are dup'ed onto 0, 1, 2).
    public static func spawn(_ argv: [String], environment: [String: String], stdin: Int32, stdout: Int32, stderr: Int32) throws -> Subprocess {
        TestDescriptorLimit.raised
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // Only 0, 1 and 2: a socket of an in-process test server (NIO accepts without CLOEXEC) or a
        // pipe of a concurrent test, inherited by a long-lived child (a keyring, a daemon), stays
        // open after its owner closes it, and the peer never sees the close.
        _ = sortedvault_posix_spawn_closefrom(&actions, 3)
        // The test process's threads block some signals (libdispatch does); a child inherits that mask,
        // and SIGTERM would stay pending forever. Start every child with an empty mask and default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let cArguments = argv.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            cArguments.forEach { free($0) }
            cEnvironment.forEach { free($0) }
        }
        var pid = pid_t()
        let status = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, cEnvironment)
        guard status == 0 else { throw HarnessError("cannot start \(argv[0]): \(String(cString: strerror(status)))") }
        return Subprocess(pid: pid)
    }

    /// Waits for the child and returns its exit status (128 + signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        if status & 0x7f == 0 { return (status >> 8) & 0xff }
        return 128 + (status & 0x7f)
    }

    /// Whether the child has exited (reaping it if so); the status is returned through `status`.
    public func hasExited(status: inout Int32) -> Bool {
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, WNOHANG)
        guard result == pid else { return false }
        status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
        return true
    }

    public func signal(_ number: Int32) { kill(pid, number) }

    /// Runs to completion with `input` on stdin; returns status, stdout and stderr.
    ///
    /// A child still running after `timeout` (a hang guard, not a measure: only a child that will
    /// never finish reaches it, even on a loaded machine) is killed, and this throws an error naming
    /// the program, so a hung child fails its test instead of holding the run.
    public static func run(_ argv: [String], environment: [String: String], input: Data,
                           timeout: Duration = .seconds(600)) throws -> (Int32, Data, Data) {
        var inPipe: [Int32] = [0, 0], outPipe: [Int32] = [0, 0], errPipe: [Int32] = [0, 0]
        guard pipe(&inPipe) == 0, pipe(&outPipe) == 0, pipe(&errPipe) == 0 else { throw HarnessError("pipe failed") }
        for fd in inPipe + outPipe + errPipe { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let child = try spawn(argv, environment: environment, stdin: inPipe[0], stdout: outPipe[1], stderr: errPipe[1])
        close(inPipe[0]); close(outPipe[1]); close(errPipe[1])
        // Feed stdin from another thread so a chatty child cannot deadlock us.
        let inputFD = inPipe[1]
        let writer = Thread {
            input.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = write(inputFD, raw.baseAddress! + offset, raw.count - offset)
                    if n <= 0 { break }
                    offset += n
                }
            }
            close(inputFD)
        }
        Glibc.signal(SIGPIPE, SIG_IGN)
        writer.start()
        var out = Data(), err = Data()
        var fds = [pollfd(fd: outPipe[0], events: Int16(POLLIN), revents: 0), pollfd(fd: errPipe[0], events: Int16(POLLIN), revents: 0)]
        var open = 2
        var buffer = [UInt8](repeating: 0, count: 65536)
        let giveUp = ContinuousClock.now + timeout
        while open > 0 {
            let left = giveUp - ContinuousClock.now
            guard left > .zero else { break }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(left.components.seconds * 1000 + 1, 60_000)))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            for index in fds.indices where fds[index].fd >= 0 && fds[index].revents != 0 {
                let n = read(fds[index].fd, &buffer, buffer.count)
                if n > 0 {
                    if index == 0 { out.append(contentsOf: buffer[0..<n]) } else { err.append(contentsOf: buffer[0..<n]) }
                } else {
                    close(fds[index].fd)
                    fds[index].fd = -1
                    open -= 1
                }
            }
        }
        for fd in fds where fd.fd >= 0 { close(fd.fd) }
        var status: Int32 = 0
        while !child.hasExited(status: &status) {
            guard ContinuousClock.now < giveUp else {
                child.signal(SIGKILL)
                child.wait()
                throw HarnessError("\(argv[0]) did not finish within \(timeout) and was killed; its last output: "
                                   + String(decoding: (out + err).suffix(2000), as: UTF8.self))
            }
            usleep(10_000)
        }
        return (status, out, err)
    }
}

/// A test fixture could not be set up; the description says what and how to fix it.
public struct HarnessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
