import CLinuxShims

#if canImport(Glibc)
import Glibc
#endif

/// Starts a program that outlives its parent and holds no terminal: a new session, standard input
/// and output on /dev/null, no other descriptor of the caller's, the caller's environment. The daemon is started this way on demand by
/// both CLIs (gpg-agent's model).
public enum DetachedProcess {
    /// posix_spawn of `arguments[0]` with `arguments`; 0 on success, else the errno value.
    public static func spawn(_ arguments: [String]) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, sortedvault_posix_spawn_setsid())
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // Nothing else of the caller's: a pipe or socket the caller inherited (git's, a shell's)
        // held open by a daemon that runs for hours would keep its reader waiting for end-of-file.
        _ = sortedvault_posix_spawn_closefrom(&actions, 3)
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        return posix_spawn(&pid, arguments[0], &actions, &attributes, argv, environ)
    }
}
