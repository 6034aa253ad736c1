import CSodium

/// Keyed BLAKE2b (`crypto_generichash`): derives purpose-bound subkeys and computes lookup tags.
///
/// ```swift
/// let itemKey = KeyedHash.deriveKey(from: masterKey, context: "item", parts: [lookup, revision])
/// ```
///
/// Inputs are length-prefixed, so `["ab", "c"]` and `["a", "bc"]` never collide. Use a distinct
/// `context` for every purpose.
public enum KeyedHash {
    public static let keyCount = Int(crypto_generichash_KEYBYTES)

    /// A 32-byte subkey in secure memory, bound to `context` and every element of `parts`.
    public static func deriveKey(from key: SecureBytes, context: String, parts: [[UInt8]]) -> SecureBytes {
        SecureBytes(count: 32) { out in
            hash(into: out, key: key, context: context, parts: parts)
        }
    }

    /// A public tag, such as the lookup identifier of an item; reveals nothing about `parts` without `key`.
    public static func tag(key: SecureBytes, context: String, parts: [[UInt8]], count: Int = 32) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { hash(into: $0, key: key, context: context, parts: parts) }
        return out
    }

    private static func hash(into out: UnsafeMutableRawBufferPointer, key: SecureBytes, context: String, parts: [[UInt8]]) {
        ensureSodium()
        precondition((16...64).contains(out.count), "BLAKE2b output must be 16...64 bytes")
        precondition((16...64).contains(key.count), "BLAKE2b key must be 16...64 bytes")
        // The state is an opaque, 64-byte-aligned struct to Swift; allocate it to libsodium's size.
        let stateBytes = crypto_generichash_statebytes()
        let stateMemory = UnsafeMutableRawPointer.allocate(byteCount: stateBytes, alignment: 64)
        defer {
            sodium_memzero(stateMemory, stateBytes)
            stateMemory.deallocate()
        }
        let state = OpaquePointer(stateMemory)
        key.withUnsafeBytes { keyRaw in
            _ = crypto_generichash_init(
                state, keyRaw.baseAddress!.assumingMemoryBound(to: UInt8.self), keyRaw.count, out.count)
        }
        func absorb(_ bytes: [UInt8]) {
            var length = UInt64(bytes.count).littleEndian
            withUnsafeBytes(of: &length) { raw in
                _ = crypto_generichash_update(state, raw.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(raw.count))
            }
            bytes.withUnsafeBufferPointer { buffer in
                if let base = buffer.baseAddress { _ = crypto_generichash_update(state, base, UInt64(buffer.count)) }
            }
        }
        absorb(Array(context.utf8))
        for part in parts { absorb(part) }
        _ = crypto_generichash_final(state, out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
    }
}
