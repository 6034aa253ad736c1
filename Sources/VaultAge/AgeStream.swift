import VaultCrypto

/// age's payload: a 16-byte nonce, then the plaintext in 64 KiB chunks, each sealed with
/// ChaCha20-Poly1305 under the payload key and the nonce `counter (11 bytes, big-endian) ‖ last`,
/// where `last` is 1 for the final chunk only (STREAM).
///
/// The final chunk may be short or full but is never empty, unless it is the only chunk of an
/// empty payload. Opening follows the reference reader exactly: a full chunk that does not open as
/// a middle chunk is tried as the final one; the end of the payload before a final chunk is a
/// truncation; bytes after the final chunk are trailing data.
enum AgeStream {
    static let nonceCount = 16
    static let chunkSize = 64 * 1024
    static let sealedChunkSize = chunkSize + ChaCha20Poly1305.tagCount

    /// Payload bytes (nonce included) that `plaintextCount` bytes seal to.
    static func sealedCount(plaintextCount: Int) -> Int {
        let chunks = max(1, (plaintextCount + chunkSize - 1) / chunkSize)
        return nonceCount + plaintextCount + chunks * ChaCha20Poly1305.tagCount
    }

    /// Plaintext bytes a well-formed payload of `payloadCount` bytes (nonce included) opens to.
    static func plaintextCount(payloadCount: Int) -> Int {
        let sealed = max(0, payloadCount - nonceCount)
        let full = sealed / sealedChunkSize, rest = sealed % sealedChunkSize
        return full * chunkSize + max(0, rest - ChaCha20Poly1305.tagCount)
    }

    /// Appends the sealed payload of `plaintext` (a fresh nonce, then the chunks) to `out`.
    static func seal(_ plaintext: UnsafeRawBufferPointer, fileKey: SecureBytes, appendingTo out: inout [UInt8]) {
        let nonce = SecureRandom.bytes(count: nonceCount)
        let key = AgeFileKey.payloadKey(fileKey: fileKey, nonce: nonce)
        let start = out.count
        out += nonce
        out += [UInt8](repeating: 0, count: sealedCount(plaintextCount: plaintext.count) - nonceCount)
        key.withUnsafeBytes { keyRaw in
            out.withUnsafeMutableBytes { outRaw in
                var offset = 0, written = start + nonceCount, counter: UInt64 = 0
                repeat {
                    let end = min(offset + chunkSize, plaintext.count)
                    let chunk = UnsafeRawBufferPointer(rebasing: plaintext[offset..<end])
                    let sealedEnd = written + chunk.count + ChaCha20Poly1305.tagCount
                    ChaCha20Poly1305.seal(chunk, key: keyRaw, nonce: chunkNonce(counter, last: end == plaintext.count),
                                          into: UnsafeMutableRawBufferPointer(rebasing: outRaw[written..<sealedEnd]))
                    offset = end
                    written = sealedEnd
                    counter += 1
                } while offset < plaintext.count
            }
        }
    }

    /// Opens `payload` (nonce included) into `out`, which holds ``plaintextCount(payloadCount:)``
    /// bytes. Each chunk is written only once it authenticates, and `released` is told how many
    /// bytes of `out` are then final, so a caller that streams can hand them on.
    static func open(_ payload: UnsafeRawBufferPointer, fileKey: SecureBytes, into out: UnsafeMutableRawBufferPointer,
                     released: (Int) -> Void = { _ in }) throws {
        guard payload.count >= nonceCount else {
            throw AgeError(.truncatedPayload, "the file ends inside the payload nonce (\(payload.count) of 16 bytes)")
        }
        precondition(out.count == plaintextCount(payloadCount: payload.count), "AgeStream.open needs plaintextCount bytes")
        let key = AgeFileKey.payloadKey(fileKey: fileKey, nonce: Array(payload[0..<nonceCount]))
        try key.withUnsafeBytes { keyRaw in
            var offset = nonceCount, written = 0, counter: UInt64 = 0
            while true {
                let left = payload.count - offset
                guard left > 0 else {
                    throw AgeError(.truncatedPayload,
                                   "the payload ends after chunk \(counter) without a final chunk: the file was cut short")
                }
                let sealed = UnsafeRawBufferPointer(rebasing: payload[offset..<(offset + min(left, sealedChunkSize))])
                let plainCount = max(0, sealed.count - ChaCha20Poly1305.tagCount)
                let target = UnsafeMutableRawBufferPointer(rebasing: out[written..<(written + plainCount)])
                var last = sealed.count < sealedChunkSize
                if last, counter > 0, plainCount == 0 {
                    throw AgeError(.tamperedPayload,
                                   "payload chunk \(counter) is an empty final chunk, which only an empty payload may have")
                }
                var opened = ChaCha20Poly1305.open(sealed, key: keyRaw, nonce: chunkNonce(counter, last: last), into: target)
                if !opened, !last {
                    last = true  // a full-length final chunk
                    opened = ChaCha20Poly1305.open(sealed, key: keyRaw, nonce: chunkNonce(counter, last: true), into: target)
                }
                guard opened else {
                    throw AgeError(.tamperedPayload,
                                   "payload chunk \(counter) does not authenticate: the file was changed, or cut inside the chunk")
                }
                offset += sealed.count
                written += plainCount
                released(written)
                if last {
                    guard offset == payload.count else {
                        throw AgeError(.trailingData, "\(payload.count - offset) bytes follow the final payload chunk")
                    }
                    return
                }
                counter += 1
            }
        }
    }

    /// The 12-byte ChaCha20-Poly1305 nonce of chunk `counter`.
    static func chunkNonce(_ counter: UInt64, last: Bool) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: ChaCha20Poly1305.nonceCount)
        for index in 0..<8 { nonce[10 - index] = UInt8(truncatingIfNeeded: counter >> UInt64(8 * index)) }
        nonce[11] = last ? 1 : 0
        return nonce
    }
}
