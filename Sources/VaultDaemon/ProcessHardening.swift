import CLinuxShims

#if canImport(Glibc)
import Glibc
#endif

/// Keeps key material out of core dumps and away from same-uid debuggers, as libsodium's memory
/// guide and gpg-agent advise: `RLIMIT_CORE = 0` and `PR_SET_DUMPABLE = 0`.
enum ProcessHardening {
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
}

/// A reason the daemon cannot start or keep running, worded for the person who started it.
public struct DaemonError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
