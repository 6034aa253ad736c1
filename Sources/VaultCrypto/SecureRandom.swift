import CSodium

/// Random bytes from the operating system's CSPRNG (`randombytes_buf`, getrandom(2) on Linux).
public enum SecureRandom {
    /// Public random bytes, such as nonces and salts. Use `SecureBytes(randomCount:)` for keys.
    public static func bytes(count: Int) -> [UInt8] {
        ensureSodium()
        var out = [UInt8](repeating: 0, count: count)
        out.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { randombytes_buf(base, raw.count) }
        }
        return out
    }

    /// A uniformly random integer in `0..<upperBound`, without modulo bias.
    public static func uniform(_ upperBound: UInt32) -> UInt32 {
        ensureSodium()
        return randombytes_uniform(upperBound)
    }
}
