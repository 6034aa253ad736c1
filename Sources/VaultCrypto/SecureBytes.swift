import CSodium

/// Secret bytes kept in libsodium's guarded heap: `sodium_malloc` places them between guard pages and
/// `mlock`s them so they stay out of swap (when `RLIMIT_MEMLOCK` allows: see ``SecureMemory``); they are zeroed when the last reference goes (and the block
/// returned to ``SecureAllocator``'s pool or to `sodium_free`).
///
/// ```swift
/// let key = SecureBytes(randomCount: 32)
/// key.withUnsafeBytes { raw in /* use raw only inside the closure */ }
/// ```
///
/// The bytes are reachable only inside `withUnsafeBytes`; do not let the pointer escape the closure, and
/// do not copy the bytes into a `String`, `Array` or `Data` that outlives the call. `==` runs in constant
/// time for a given length. `description` never shows the contents.
public final class SecureBytes: @unchecked Sendable {
    // Invariant: `base` points to `capacity` bytes from `SecureAllocator`, written only during
    // initialisation, so concurrent reads are safe; that is what makes the `@unchecked Sendable` sound.
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    /// The number of secret bytes.
    public let count: Int

    /// Allocates `count` bytes and lets `initializer` fill them.
    public init(count: Int, initializingWith initializer: (UnsafeMutableRawBufferPointer) throws -> Void) rethrows {
        precondition(count >= 0, "SecureBytes count must not be negative")
        ensureSodium()
        let capacity = SecureAllocator.capacity(for: count)
        guard let pointer = SecureAllocator.allocate(capacity: capacity) else {
            // Out of guarded memory; refusing to fall back to the ordinary heap keeps the guarantee.
            fatalError("sodium_malloc could not allocate \(count) bytes of secure memory")
        }
        // Fill before the stored properties are set: a class init that throws after full
        // initialisation runs `deinit`, which would free the memory a second time.
        do {
            try initializer(UnsafeMutableRawBufferPointer(start: pointer, count: count))
        } catch {
            SecureAllocator.release(pointer, capacity: capacity)  // zeroes first
            throw error
        }
        base = pointer
        self.capacity = capacity
        self.count = count
    }

    /// Copies `bytes` into secure memory. The caller stays responsible for wiping its own copy.
    public convenience init<Bytes: Collection>(copying bytes: Bytes) where Bytes.Element == UInt8 {
        self.init(count: bytes.count) { buffer in
            _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
        }
    }

    /// `count` bytes from the operating system's CSPRNG.
    public convenience init(randomCount count: Int) {
        self.init(count: count) { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, buffer.count) }
        }
    }

    deinit {
        SecureAllocator.release(base, capacity: capacity)  // zeroes, then pools or frees
    }

    /// Gives read access to the bytes for the duration of `body`.
    public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A copy of the bytes in fresh secure memory.
    public func copy() -> SecureBytes {
        withUnsafeBytes { SecureBytes(copying: $0) }
    }
}

extension SecureBytes: Equatable {
    /// Constant-time comparison of the contents (`sodium_memcmp`); lengths are not secret.
    public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.count == 0 { return true }
        return sodium_memcmp(lhs.base, rhs.base, lhs.count) == 0
    }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
    public var description: String { "SecureBytes(<redacted>)" }
    public var debugDescription: String { description }
}

extension SecureBytes {
    /// Compares with non-secret expected bytes in constant time; for tests and for
    /// checking known markers, not for keys.
    public func constantTimeEquals<Bytes: Collection>(_ other: Bytes) -> Bool where Bytes.Element == UInt8 {
        let candidate = SecureBytes(copying: other)
        return self == candidate
    }
}
