import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The daemon's own limit on open descriptors: the soft `RLIMIT_NOFILE` raised to the hard one at
/// start. systemd starts services with a soft limit of 1,024 (and the unit asks for more with
/// `LimitNOFILE=`); every client connection, metrics connection, provider request and database
/// file takes one, and a daemon that runs out fails `socket()` and `open()` everywhere at once.
/// The metrics endpoint's own cap (``MetricsServer/maxConnections``) keeps other users from
/// spending them; this keeps a busy owner from it.
enum DescriptorLimit {
    /// Raises the soft limit to the hard limit; logs what it could not do and goes on (a lower
    /// limit is no reason not to serve).
    static func raiseToHardLimit(logger: Logger) {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        guard limit.rlim_cur < limit.rlim_max else { return }
        var raised = limit
        // An unlimited hard limit (RLIM_INFINITY) cannot be the soft one: the kernel's ceiling is fs.nr_open.
        raised.rlim_cur = limit.rlim_max == rlim_t.max ? min(limit.rlim_max, Self.kernelCeiling) : limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) != 0 {
            logger.warning("""
                cannot raise the limit on open files from \(limit.rlim_cur) to \(limit.rlim_max) \
                (setrlimit RLIMIT_NOFILE: \(String(cString: strerror(errno)))); raise it with LimitNOFILE= in the systemd unit
                """)
        }
    }

    private static var kernelCeiling: rlim_t {
        let text = (try? String(contentsOfFile: "/proc/sys/fs/nr_open", encoding: .utf8)) ?? ""
        return rlim_t(text.trimmedWhitespace) ?? 1_048_576
    }
}
