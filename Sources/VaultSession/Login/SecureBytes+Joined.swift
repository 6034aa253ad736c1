import VaultCrypto

extension SecureBytes {
    /// The parts one after another, in fresh secure memory (a header value or a body around a token).
    static func joined(_ parts: [SecureBytes]) -> SecureBytes {
        SecureBytes(count: parts.reduce(0) { $0 + $1.count }) { out in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { raw in
                    if raw.count > 0 { (out.baseAddress! + offset).copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
                    offset += raw.count
                }
            }
        }
    }

    /// `Bearer <token>`, for an `Authorization` header.
    static func bearer(_ token: SecureBytes) -> SecureBytes {
        joined([SecureBytes(copying: Array("Bearer ".utf8)), token])
    }
}
