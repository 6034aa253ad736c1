import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A command that keeps running while the test talks to it: standard input is a pipe the test
/// writes to, standard output and error go to files the test reads as they grow.
///
/// ```swift
/// let login = try BackgroundCommand(argv, environment: cli.environment, directory: cli.root)
/// let url = try login.waitForStandardError { $0.contains("http") }
/// login.write("answer\n")
/// let status = login.wait()
/// ```
public final class BackgroundCommand: @unchecked Sendable {
    public let process: Subprocess
    public let stdoutPath: String
    public let stderrPath: String
    private var stdinWriteEnd: Int32
    private var status: Int32?

    public init(_ argv: [String], environment: [String: String], directory: String) throws {
        let name = UUID().uuidString.prefix(8)
        stdoutPath = directory + "/cmd-\(name).out"
        stderrPath = directory + "/cmd-\(name).err"
        var input: [Int32] = [0, 0]
        guard pipe(&input) == 0 else { throw HarnessError("pipe failed") }
        for fd in input { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        let out = open(stdoutPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(stderrPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer { close(out); close(err); close(input[0]) }
        process = try Subprocess.spawn(argv, environment: environment, stdin: input[0], stdout: out, stderr: err)
        stdinWriteEnd = input[1]
        Glibc.signal(SIGPIPE, SIG_IGN)
    }

    deinit {
        if status == nil {
            process.signal(SIGKILL)
            process.wait()
        }
        closeStandardInput()
    }

    public var standardOutput: String { (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? "" }
    public var standardError: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// Waits until the standard error satisfies `condition` (a hang guard of `timeout` seconds; the
    /// test does not wait for it otherwise) and returns it.
    public func waitForStandardError(timeout: TimeInterval = 120, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let text = standardError
            if condition(text) { return text }
            var exit: Int32 = 0
            if status == nil, process.hasExited(status: &exit) { status = exit }
            if status != nil {
                let text = standardError
                if condition(text) { return text }
                throw HarnessError("the command exited with \(status!) before its standard error said what was waited for:\n\(text)")
            }
            usleep(20_000)
        }
        throw HarnessError("the command's standard error did not say what was waited for in \(Int(timeout)) s:\n\(standardError)")
    }

    public func write(_ text: String) {
        Array(text.utf8).withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(stdinWriteEnd, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { break }
                offset += n
            }
        }
    }

    public func closeStandardInput() {
        if stdinWriteEnd >= 0 { close(stdinWriteEnd) }
        stdinWriteEnd = -1
    }

    public func signal(_ number: Int32) { process.signal(number) }

    /// Waits for the command to exit; its status (128 + signal when killed).
    @discardableResult
    public func wait() -> Int32 {
        if let status { return status }
        let result = process.wait()
        status = result
        return result
    }

    /// The bytes of `/proc/PID/NAME` (cmdline, environ) while the command runs.
    /// `/proc/PID/name` of the running command; throws when it cannot be read or is empty (the
    /// command ended, or the file is not there), so a check of what it holds never passes on nothing.
    public func proc(_ name: String) throws -> Data {
        guard let data = FileManager.default.contents(atPath: "/proc/\(process.pid)/\(name)"), !data.isEmpty else {
            throw HarnessError("cannot read /proc/\(process.pid)/\(name): the command ended, or the file is empty")
        }
        return data
    }
}
