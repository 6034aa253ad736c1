import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

// `localizedDescription` (what SwiftUI alerts and most app code show) is otherwise Foundation's
// generic "The operation couldn't be completed" text; the reason says what happened and what to do.
extension VaultError: LocalizedError {
    public var errorDescription: String? { reason }
}
