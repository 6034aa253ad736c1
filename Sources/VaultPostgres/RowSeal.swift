import NIOCore
import VaultCore
import VaultCrypto

/// How a row's two ciphertexts are sealed: AEAD under the row's data key, with associated data
/// `"sortedvault fleet item v1" ‖ 0 ‖ part ‖ lookup ‖ generation ‖ key id`. A ciphertext copied to
/// another row, put back from an older generation, relabelled with another key id, or swapped
/// between the metadata and secret columns fails to open. An outbox entry is sealed the same way,
/// as part 3 with its id in place of the generation, so no payload opens as an item or another entry.
enum RowSeal {
    enum Part: UInt8 {
        case metadata = 1
        case secret = 2
        /// A revocation outbox entry's payload; its identity's generation is the entry's id.
        case revocation = 3
    }

    struct Identity: Sendable {
        let lookup: [UInt8]
        let generation: Int64
        let keyID: Int32

        func associatedData(_ part: Part) -> [UInt8] {
            Array("sortedvault fleet item v1".utf8) + [0, part.rawValue] + lookup + RowSeal.bigEndian(generation) + RowSeal.bigEndian(Int64(keyID))
        }
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
