import CSodium

extension SecureBytes {
    /// Decodes standard, padded base64 into secure memory. Returns nil for anything else (including
    /// whitespace and trailing characters).
    public convenience init?(base64Encoded text: String) {
        ensureSodium()
        var text = text
        let capacity = text.utf8.count / 4 * 3
        // Decode into a scratch secure buffer of the upper-bound size, then copy the exact length.
        var length = 0
        var status: Int32 = -1
        let scratch = SecureBytes(count: capacity) { out in
            status = text.withUTF8 { utf8 in
                utf8.withMemoryRebound(to: CChar.self) { chars in
                    sodium_base642bin(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity,
                        chars.baseAddress, chars.count, nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
                }
            }
        }
        guard status == 0, length <= capacity else { return nil }
        self.init(count: length) { out in
            scratch.withUnsafeBytes { source in
                if length > 0 { out.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: length) }
            }
        }
    }

    /// Standard base64 with padding. The result is an ordinary `String`: keep its lifetime short.
    public func base64EncodedString() -> String {
        ensureSodium()
        let capacity = sodium_base64_encoded_len(count, sodium_base64_VARIANT_ORIGINAL)
        var out = [CChar](repeating: 0, count: capacity)
        defer { out.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        withUnsafeBytes { raw in
            var empty: UInt8 = 0
            withUnsafePointer(to: &empty) { emptyPointer in
                _ = sodium_bin2base64(&out, capacity, raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer,
                                      raw.count, sodium_base64_VARIANT_ORIGINAL)
            }
        }
        return String(cString: out)
    }
}

extension SecureBytes {
    /// Decodes standard, padded base64 from raw bytes (e.g. a span of a received frame) into secure
    /// memory, without a `String` in between. Nil for anything but base64.
    public convenience init?(base64Encoded raw: UnsafeRawBufferPointer) {
        ensureSodium()
        guard let source = raw.baseAddress, raw.count > 0 else {
            self.init(count: 0) { _ in }
            return
        }
        let capacity = raw.count / 4 * 3
        guard capacity > 0 else { return nil }  // 1 to 3 characters are never whole base64
        var length = 0
        var status: Int32 = -1
        let scratch = SecureBytes(count: capacity) { out in
            status = sodium_base642bin(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity,
                source.assumingMemoryBound(to: CChar.self), raw.count,
                nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
        }
        guard status == 0, length <= capacity else { return nil }
        self.init(count: length) { out in
            scratch.withUnsafeBytes { source in
                if length > 0 { out.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: length) }
            }
        }
    }

    /// The room ``encodeBase64(into:)`` needs: the base64 length plus one (libsodium writes a NUL).
    public var base64Capacity: Int {
        ensureSodium()
        return sodium_base64_encoded_len(count, sodium_base64_VARIANT_ORIGINAL)
    }

    /// Writes standard padded base64 of the bytes into `buffer` (at least ``base64Capacity`` long)
    /// and returns its length without the NUL: for writers that keep the text in memory they wipe.
    public func encodeBase64(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let capacity = base64Capacity
        precondition(buffer.count >= capacity, "encodeBase64 needs base64Capacity bytes")
        withUnsafeBytes { raw in
            var empty: UInt8 = 0
            withUnsafePointer(to: &empty) { emptyPointer in
                _ = sodium_bin2base64(buffer.baseAddress!.assumingMemoryBound(to: CChar.self), capacity,
                                      raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer,
                                      raw.count, sodium_base64_VARIANT_ORIGINAL)
            }
        }
        return capacity - 1
    }
}
