import CSodium

/// Base64 between secure memory and raw byte buffers, for wire code that must not make a `String`
/// of a secret: the lean CLI writes a Store call's secret straight into its (wiped) frame buffer and
/// decodes a Retrieve reply's secret straight out of the received frame.
extension SecureBytes {
    /// Decodes standard, padded base64 from raw bytes into secure memory; nil for anything else.
    ///
    /// ```swift
    /// let secret = frame.withUnsafeBytes { SecureBytes(base64Bytes: UnsafeRawBufferPointer(rebasing: $0[range])) }
    /// ```
    public convenience init?(base64Bytes text: UnsafeRawBufferPointer) {
        ensureSodium()
        let capacity = text.count / 4 * 3
        var length = 0
        var status: Int32 = -1
        let scratch = SecureBytes(count: capacity) { out in
            guard let source = text.baseAddress, capacity > 0 else {
                status = text.isEmpty ? 0 : -1
                return
            }
            status = sodium_base642bin(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), capacity,
                source.assumingMemoryBound(to: CChar.self), text.count, nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
        }
        guard status == 0, length <= capacity else { return nil }
        self.init(count: length) { out in
            scratch.withUnsafeBytes { source in
                if length > 0 { out.baseAddress!.copyMemory(from: source.baseAddress!, byteCount: length) }
            }
        }
    }

    /// The length of this secret in standard, padded base64 (without a terminating NUL).
    public var base64Count: Int { (count + 2) / 3 * 4 }

    /// Writes this secret as standard, padded base64 into `output`, which must hold ``base64Count``
    /// bytes. Nothing but `output` sees the encoding: the caller wipes it when done.
    public func writeBase64(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= base64Count, "the base64 output buffer is too small")
        ensureSodium()
        // sodium_bin2base64 writes a terminating NUL: encode into secure scratch, copy the text.
        let scratch = SecureBytes(count: base64Count + 1) { out in
            withUnsafeBytes { raw in
                var empty: UInt8 = 0
                withUnsafePointer(to: &empty) { emptyPointer in
                    _ = sodium_bin2base64(
                        out.baseAddress!.assumingMemoryBound(to: CChar.self), out.count,
                        raw.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? emptyPointer, raw.count,
                        sodium_base64_VARIANT_ORIGINAL)
                }
            }
        }
        scratch.withUnsafeBytes { encoded in
            if base64Count > 0 { output.baseAddress!.copyMemory(from: encoded.baseAddress!, byteCount: base64Count) }
        }
    }
}
