import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The test process runs hundreds of tests at once, some of which hold thousands of connections: its
/// soft limit on descriptors is raised to the hard one (as the daemon raises its own) the first time
/// a harness is used, and a test that needs more never lowers it. A limit met by chance made
/// `open` fail in whichever test came next ("cannot start …: Bad file descriptor").
public enum TestDescriptorLimit {
    /// Raises the soft limit to the hard one, once.
    public static let raised: Void = {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < limit.rlim_max else { return }
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }()

    /// At least `count` descriptors for this process (within the hard limit), never fewer than now.
    public static func atLeast(_ count: rlim_t) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur < count else { return }
        limit.rlim_cur = min(limit.rlim_max, count)
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
}
