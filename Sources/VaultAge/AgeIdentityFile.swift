import VaultCrypto

extension AgeIdentity {
    /// The identities of an identity file as `age-keygen` writes it and `age -i` reads it: one
    /// `AGE-SECRET-KEY-1…` per line; empty lines and lines starting with `#` are skipped. Throws
    /// ``AgeError/Code/invalidIdentity`` naming the line, never its text.
    public static func identities(inFile contents: SecureBytes) throws -> [AgeIdentity] {
        var identities: [AgeIdentity] = []
        var failure: AgeError?
        contents.withUnsafeBytes { bytes in
            var start = 0, number = 0
            while start < bytes.count, failure == nil {
                number += 1
                var end = start
                while end < bytes.count, bytes[end] != 0x0A { end += 1 }
                var last = end
                if last > start, bytes[last - 1] == 0x0D { last -= 1 }  // a CRLF file
                let line = UnsafeRawBufferPointer(rebasing: bytes[start..<last])
                start = end + 1
                if line.isEmpty || line[0] == UInt8(ascii: "#") { continue }
                do {
                    identities.append(try x25519(secretKey: SecureBytes(copying: line)))
                } catch {
                    failure = AgeError(.invalidIdentity, "line \(number) of the identity file is not an X25519 identity (\"AGE-SECRET-KEY-1…\")")
                }
            }
        }
        if let failure { throw failure }
        guard !identities.isEmpty else { throw AgeError(.invalidIdentity, "the identity file holds no identity") }
        return identities
    }
}
