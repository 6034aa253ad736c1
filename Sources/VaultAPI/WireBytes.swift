#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Encoded bytes that may hold a secret (a frame, or a reply's parameters): zeroed when the last
/// reference goes. Read them only inside ``withUnsafeBytes(_:)``; a copy you make is yours to wipe.
///
/// ```swift
/// let frame = VarlinkWire.encodeCall(Vault.Retrieve.self, .init(service: "github", account: "ada"))
/// frame.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
/// ```
public final class WireBytes: @unchecked Sendable {
    // Invariant: written only by the `WireWriter` that made it, before it was handed out.
    private let storage: UnsafeMutableRawBufferPointer
    /// The number of bytes.
    public let count: Int

    init(taking storage: UnsafeMutableRawBufferPointer, count: Int) {
        self.storage = storage
        self.count = count
    }

    deinit {
        if let base = storage.baseAddress {
            wipeMemory(base, storage.count)
            storage.deallocate()
        }
    }

    /// Gives read access to the bytes for the duration of `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: storage.baseAddress, count: count))
    }
}

/// Zeroes memory in a way the optimizer does not remove (the write goes through a volatile-like
/// call to libc).
func wipeMemory(_ base: UnsafeMutableRawPointer, _ count: Int) {
    guard count > 0 else { return }
    explicit_bzero(base, count)
}
