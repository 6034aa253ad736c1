import VaultCrypto

extension AgeIdentity {
    /// The identities of an identity file as `age-keygen` writes it and `age -i` reads it: one
    /// `AGE-SECRET-KEY-1…` per line; empty lines and lines starting with `#` are skipped. Throws
    /// ``AgeError/Code/invalidIdentity`` naming the line, never its text.
    public static func identities(inFile contents: SecureBytes) throws -> [AgeIdentity] {
        var identities: [AgeIdentity] = []
        try contents.forEachLine(droppingCarriageReturns: true) { (number: Int, line: UnsafeRawBufferPointer) throws(AgeError) in
            if line.isEmpty || line[0] == UInt8(ascii: "#") { return }
            do {
                identities.append(try x25519(secretKey: SecureBytes(copying: line)))
            } catch {
                throw AgeError(.invalidIdentity, "line \(number) of the identity file is not an X25519 identity (\"AGE-SECRET-KEY-1…\")")
            }
        }
        guard !identities.isEmpty else { throw AgeError(.invalidIdentity, "the identity file holds no identity") }
        return identities
    }
}
