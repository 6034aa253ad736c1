import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The user's browser, through `xdg-open`, started with a private page that leads to the sign-in
/// URL (``PrivateRedirectPage``), never with the URL itself: a command line is readable by every
/// user in `/proc/PID/cmdline`, and the URL carries the sign-in's state, challenge and nonce.
public enum SystemBrowser {
    /// The pages opened and not yet removed, by the URL they lead to.
    private static let pages = Mutex<[String: [PrivateRedirectPage]]>([:])

    /// Writes a private page leading to `url` and runs `xdg-open` with the page's `file://` URL
    /// (in `environment`, where `XDG_RUNTIME_DIR` also says where the page goes),
    /// not waited for, its output discarded. The page stays until ``removePages(for:)`` (call it
    /// when the sign-in ends). A missing xdg-open is fine when the caller also shows the URL (as
    /// `session login` always does, on standard error); a page that cannot be made throws, and
    /// nothing is started.
    public static func open(_ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let page = try PrivateRedirectPage(to: url, environment: environment)
        pages.withLock { $0[url.absoluteString, default: []].append(page) }
        spawn(["xdg-open", page.fileURL.absoluteString], environment: environment)
    }

    /// Removes the pages ``open(_:environment:)`` wrote for `url`.
    public static func removePages(for url: URL) {
        let opened = pages.withLock { $0.removeValue(forKey: url.absoluteString) ?? [] }
        for page in opened { page.remove() }
    }

    private static func spawn(_ words: [String], environment: [String: String]) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd in [Int32(0), 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
        let argv = words.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0.key + "=" + $0.value) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        // posix_spawnp looks xdg-open up in this process's PATH.
        if posix_spawnp(&pid, words[0], &actions, nil, argv, envp) == 0 {
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
