import CLICore
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `DetachedProcess.spawn`, as both CLIs start the daemon on demand: the child leads a session of
/// its own and holds only standard input, output and error (on /dev/null), none of the caller's
/// other descriptors. Run in this process, so that `scripts/sanitizers address` covers the C shims
/// it calls (`sortedvault_posix_spawn_setsid`, `sortedvault_posix_spawn_closefrom`).
@Suite(.timeLimit(.minutes(20))) struct DetachedProcessTests {
    @Test func theChildLeadsItsOwnSessionAndInheritsNoOtherDescriptor() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-detached-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let pidFile = directory + "/pid", done = directory + "/done"
        // As a caller's pipe or NIO's accepted socket is: open without close-on-exec.
        let leaked = open("/dev/null", O_RDONLY)
        #expect(leaked > 2)
        defer { close(leaked) }
        // The child says who it is, then waits (at most a minute) to be looked at.
        let script = """
            echo $$ > "$1.tmp" && mv "$1.tmp" "$1"
            i=0; while [ ! -e "$2" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
            """
        #expect(DetachedProcess.spawn(["/bin/sh", "-c", script, "sh", pidFile, done]) == 0)
        var pid: pid_t?
        for _ in 0..<3000 where pid == nil {  // 30 s at most
            pid = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            if pid == nil { usleep(10_000) }
        }
        let child = try #require(pid, "the detached child did not start within 30 s")
        defer {
            FileManager.default.createFile(atPath: done, contents: Data())
            var status: Int32 = 0
            for _ in 0..<3000 where waitpid(child, &status, WNOHANG) == 0 { usleep(10_000) }
        }
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(child)/fd").compactMap { Int32($0) }
        #expect(Set(descriptors) == [0, 1, 2], "the detached child holds descriptors \(descriptors.sorted()); \(leaked) was the caller's")
        for fd in 0...2 {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(child)/fd/\(fd)") == "/dev/null")
        }
        // /proc/PID/stat: pid (comm) state ppid pgrp session …
        let stat = try String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        #expect(fields.count > 3 && fields[2] == "\(child)" && fields[3] == "\(child)", "the child is not a session leader: \(stat)")
        #expect(getsid(child) == child)
    }
}
