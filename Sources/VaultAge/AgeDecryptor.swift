import VaultCrypto

/// Opens age v1 files, binary or ASCII-armored, into secure memory.
///
/// ```swift
/// let opener = AgeDecryptor(identities: [try .x25519(secretKey: keyText)])
/// let backup = try opener.open(file)                     // SecureBytes
/// ```
///
/// The whole payload is authenticated before anything is returned: a changed, cut or extended file
/// throws and releases no plaintext. Passphrase files may ask for an scrypt work factor up to
/// `maximumWorkFactor` (age's 22, 4 GiB of memory, by default); a file asking for more is refused
/// before any work. Lower the maximum only to bound the cost, e.g. in tests: never raise it for
/// files from strangers.
public struct AgeDecryptor: Sendable {
    /// age's default cap on the scrypt work factor of a file being opened.
    public static let defaultMaximumWorkFactor = 22

    public let identities: [AgeIdentity]
    public let maximumWorkFactor: Int

    public init(identities: [AgeIdentity], maximumWorkFactor: Int = defaultMaximumWorkFactor) {
        precondition(!identities.isEmpty, "AgeDecryptor needs at least one identity")
        precondition((1...30).contains(maximumWorkFactor), "scrypt work factors run from 1 to 30")
        self.identities = identities
        self.maximumWorkFactor = maximumWorkFactor
    }

    /// The plaintext of `file`. Armor is recognised by its `-----BEGIN` line (after optional
    /// whitespace); anything else is read as a binary age file. Throws ``AgeError``.
    public func open<Bytes: ReadableBytes>(_ file: Bytes) throws -> SecureBytes {
        try file.withUnsafeBytes { raw in
            if AgeArmor.looksArmored(raw) {
                let binary = try AgeArmor.decode(raw)
                return try binary.withUnsafeBytes { try openBinary($0) }
            }
            return try openBinary(raw)
        }
    }

    func openBinary(_ file: UnsafeRawBufferPointer) throws -> SecureBytes {
        let (fileKey, payloadOffset) = try unwrapFileKey(file)
        let payload = UnsafeRawBufferPointer(rebasing: file[payloadOffset...])
        return try SecureBytes(count: AgeStream.plaintextCount(payloadCount: payload.count)) { out in
            try AgeStream.open(payload, fileKey: fileKey, into: out)
        }
    }

    /// Parses the header, unwraps the file key with the first identity that can, and checks the
    /// header MAC. Returns the file key and where the payload starts.
    func unwrapFileKey(_ file: UnsafeRawBufferPointer) throws -> (SecureBytes, Int) {
        let header = try AgeHeader.parse(file)
        var wrongPassphrase: AgeError?
        for identity in identities {
            let fileKey: SecureBytes?
            do {
                fileKey = try identity.unwrap(header.stanzas, maximumWorkFactor: maximumWorkFactor)
            } catch let error as AgeError where error.code == .wrongPassphrase {
                wrongPassphrase = error  // another passphrase in the list may still open it
                continue
            }
            guard let fileKey else { continue }
            let valid = header.macInput.withUnsafeBytes { AgeFileKey.verifyHeaderMAC(header.mac, fileKey: fileKey, header: $0) }
            guard valid else {
                throw AgeError(.headerMACMismatch, "the header MAC does not match: the header was changed after sealing")
            }
            return (fileKey, header.payloadOffset)
        }
        if let wrongPassphrase { throw wrongPassphrase }
        // Stanza types are public header text, printable ASCII; a few, cut short, name the file's kind.
        let types = header.stanzas.prefix(8).map { String($0.type.prefix(32)) }.joined(separator: ", ")
        throw AgeError(.noIdentityMatched,
                       "none of the \(identities.count) identities opens a stanza of this file (stanza types: \(types))")
    }
}
