#if canImport(Glibc)
import Glibc
#endif

/// Zeroes a buffer that held a secret, in a way the optimiser may not drop (explicit_bzero).
func wipe(_ buffer: inout [UInt8]) {
    buffer.withUnsafeMutableBytes { raw in
        if let base = raw.baseAddress { explicit_bzero(base, raw.count) }
    }
}
