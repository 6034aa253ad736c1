import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where every piece of vault logic gets "now". Inject it; tests pass a manual clock and advance it
/// instead of sleeping.
public protocol VaultClock: Sendable {
    /// The current wall-clock time.
    var now: Date { get }
}

/// The real wall clock. The only place that reads the system time.
public struct SystemClock: VaultClock {
    public init() {}
    public var now: Date { Date() }
}
