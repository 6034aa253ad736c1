import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import VaultCore
import VaultCrypto

/// How a row's two ciphertexts are sealed: AEAD under the row's data key, with associated data
/// `"sortedvault fleet item v1" ‖ 0 ‖ part ‖ lookup ‖ generation ‖ key id`. A ciphertext copied to
/// another row, put back from an older generation, relabelled with another key id, or swapped
/// between the metadata and secret columns fails to open. An outbox entry is sealed the same way,
/// as part 4 with its id in place of the generation and its `discard_after` appended, so no payload
/// opens as an item or another entry, and an entry whose discard time was changed does not open
/// (entries written before part 4 are part 3, without it).
enum RowSeal {
    enum Part: UInt8 {
        case metadata = 1
        case secret = 2
        /// A revocation outbox entry's payload as first written; its identity's generation is the entry's id.
        case revocation = 3
        /// The same, also bound to the entry's `discard_after` (``Identity/bound``).
        case revocationUntil = 4
    }

    struct Identity: Sendable {
        let lookup: [UInt8]
        let generation: Int64
        let keyID: Int32
        /// More the ciphertext is bound to: an outbox entry's `discard_after` (``discardBound(_:)``).
        var bound: [UInt8] = []

        func associatedData(_ part: Part) -> [UInt8] {
            Array("sortedvault fleet item v1".utf8) + [0, part.rawValue] + lookup + RowSeal.bigEndian(generation)
                + RowSeal.bigEndian(Int64(keyID)) + bound
        }
    }

    /// An outbox entry's `discard_after` as sealed: whole seconds since 1970, or a marker for none.
    /// Whole seconds, so the value the database gives back (microseconds) is the one sealed.
    static func discardBound(_ date: Date?) -> [UInt8] {
        guard let date else { return [0] }
        return [1] + bigEndian(Int64(date.timeIntervalSince1970.rounded()))
    }

    /// Opens an outbox entry's payload: part 4, bound to `discardAfter`, or part 3 (written before
    /// the discard time was bound). Throws `integrityFailure` when neither opens.
    static func openEntry(_ sealed: ByteBuffer, id: Int64, lookup: [UInt8], keyID: Int32, discardAfter: Date?,
                          key: SecureBytes) throws -> SecureBytes {
        let bound = Identity(lookup: lookup, generation: id, keyID: keyID, bound: discardBound(discardAfter))
        if let payload = try? RowSeal.open(sealed, .revocationUntil, bound, key: key) { return payload }
        do { return try RowSeal.open(sealed, .revocation, Identity(lookup: lookup, generation: id, keyID: keyID), key: key) }
        catch { throw VaultErrorText.outboxEntryDoesNotOpen }
    }

    static func sealEntry(_ payload: SecureBytes, id: Int64, lookup: [UInt8], keyID: Int32, discardAfter: Date?,
                          key: SecureBytes) throws -> ByteBuffer {
        try RowSeal.seal(payload, .revocationUntil, Identity(lookup: lookup, generation: id, keyID: keyID, bound: discardBound(discardAfter)), key: key)
    }

    static func seal(_ plaintext: SecureBytes, _ part: Part, _ identity: Identity, key: SecureBytes) throws -> ByteBuffer {
        ByteBuffer(bytes: try AEAD.seal(plaintext, key: key, associatedData: identity.associatedData(part)))
    }

    static func open(_ sealed: ByteBuffer, _ part: Part, _ identity: Identity, key: SecureBytes) throws -> SecureBytes {
        do {
            return try AEAD.open(Array(sealed.readableBytesView), key: key, associatedData: identity.associatedData(part))
        } catch {
            throw VaultErrorText.rowDoesNotOpen
        }
    }

    static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian, Array.init)
    }
}
