#if canImport(Glibc)
import Glibc
#endif

/// The user's browser, through `xdg-open`.
public enum SystemBrowser {
    /// `xdg-open URL`, not waited for, its output discarded; a missing xdg-open is fine when the
    /// caller also shows the URL (as `session login` always does on standard error).
    public static func open(_ url: String) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in [Int32(0), 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let words: [String] = ["xdg-open", url]
        let argv = words.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        if posix_spawnp(&pid, "xdg-open", &actions, nil, argv, environ) == 0 {
            // Reaped on a thread of its own so that no zombie stays behind in a long-running app.
            let child = pid
            var thread = pthread_t()
            let context = UnsafeMutablePointer<pid_t>.allocate(capacity: 1)
            context.initialize(to: child)
            if pthread_create(&thread, nil, { raw in
                let pid = raw!.assumingMemoryBound(to: pid_t.self)
                var status: Int32 = 0
                _ = waitpid(pid.pointee, &status, 0)
                pid.deallocate()
                return nil
            }, context) == 0 {
                pthread_detach(thread)
            } else {
                context.deallocate()
            }
        }
    }
}
