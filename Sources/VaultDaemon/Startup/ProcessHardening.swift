import CLinuxShims
import FoundationEssentials
import Logging
import VaultCrypto

#if canImport(Glibc)
import Glibc
#endif

/// Keeps key material out of core dumps and away from same-uid debuggers, as libsodium's memory
/// guide and gpg-agent advise: `RLIMIT_CORE = 0` and `PR_SET_DUMPABLE = 0`; holds no descriptor it
/// did not open; and says so when secret memory cannot be kept out of swap.
public enum ProcessHardening {
    /// Applies both settings; throws if either cannot be set (fail closed).
    static func apply() throws {
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        guard setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &noCore) == 0 else {
            throw DaemonError("cannot disable core dumps (setrlimit RLIMIT_CORE): \(String(cString: strerror(errno)))")
        }
        guard sortedvault_set_nondumpable() == 0 else {
            throw DaemonError("cannot make the process non-dumpable (prctl PR_SET_DUMPABLE): \(String(cString: strerror(errno)))")
        }
    }

    /// Whether the process is currently non-dumpable (for `status` and tests).
    static var isNonDumpable: Bool { sortedvault_get_dumpable() == 0 }

    /// Closes every descriptor the process inherited but standard input, output, error and
    /// `listener` (systemd's LISTEN_FDS socket). A command that starts the daemon on demand may
    /// hold a passphrase pipe (`--passphrase-fd 3`) or any other file without close-on-exec; the
    /// daemon outlives it and must not keep those open.
    ///
    /// Inherited means "open without FD_CLOEXEC": descriptors the runtime opened for itself are
    /// close-on-exec and stay. Call first thing, before anything else opens files.
    public static func closeInheritedDescriptors(keeping listener: CInt?) {
        guard let directory = opendir("/proc/self/fd") else { return }
        let own = dirfd(directory)
        var inherited: [CInt] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let descriptor = CInt(name), descriptor > 2, descriptor != own, descriptor != listener else { continue }
            let flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 { inherited.append(descriptor) }
        }
        closedir(directory)
        for descriptor in inherited { close(descriptor) }
    }

    /// Logs a warning, once, when a block of secret memory cannot be locked in RAM (checked now
    /// with one block, and for every later block). The daemon keeps running: the secrets are still
    /// guarded and wiped, but they may reach swap.
    public static func warnWhenSecretsCanBeSwapped(logger: Logger) {
        SecureMemory.onFirstLockFailure { failure in
            logger.warning("""
                secret memory cannot be locked in RAM (\(failure)): keys and secrets may be written to swap. \
                Raise the limit (LimitMEMLOCK=8M in the systemd unit, or `ulimit -l 8192` before starting the daemon), \
                or use encrypted swap or none
                """)
        }
        SecureMemory.probe()
    }
}

/// A reason the daemon cannot start or keep running, worded for the person who started it.
public struct DaemonError: Error, CustomStringConvertible {
    public let description: String
    /// Another daemon already serves the socket: the command that started this one has its answer.
    public var anotherDaemonServes = false
    public init(_ description: String, anotherDaemonServes: Bool = false) {
        self.description = description
        self.anotherDaemonServes = anotherDaemonServes
    }
}
