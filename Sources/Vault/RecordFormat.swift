import Foundation
import VaultCore
import VaultCrypto

/// Sealed record format, version 1: `0x01 ‖ nonce(24) ‖ tag(16) ‖ XSalsa20 ciphertext`, sealed under
/// the per-row, per-revision, per-part key of ``ItemKeys/recordKey(lookup:revision:part:format:)``.
///
/// Any change to any byte, or to the row or revision it belongs to, makes `open` throw
/// `.integrityFailure`. The format is a contract: a v1 file committed as a test fixture must always open.
enum RecordFormat {
    static let version: UInt8 = 1

    static func seal(_ plaintext: SecureBytes, keys: ItemKeys, lookup: [UInt8], revision: UInt64, part: RecordPart) throws -> [UInt8] {
        let key = keys.recordKey(lookup: lookup, revision: revision, part: part, format: version)
        return [version] + (try SecretBox.seal(plaintext, key: key))
    }

    static func open(_ sealed: [UInt8], keys: ItemKeys, lookup: [UInt8], revision: UInt64, part: RecordPart) throws -> SecureBytes {
        guard let first = sealed.first, first == version else {
            throw VaultError.integrityFailure("an item's stored record is damaged (unknown record format); delete the item and store it again")
        }
        let key = keys.recordKey(lookup: lookup, revision: revision, part: part, format: version)
        do {
            return try SecretBox.open(sealed[1...], key: key)
        } catch {
            throw VaultError.integrityFailure(
                "an item's stored record failed its integrity check: it was damaged, tampered with, moved or rolled back; delete the item and store it again")
        }
    }
}

/// The sealed metadata: the names, label, attributes and dates of an item, as JSON inside the box.
struct SealedMetadata: Codable {
    static let maximumEncodedBytes = 256 * 1024

    var service: String
    var account: String
    var label: String?
    var attributes: [String: String]
    var createdAt: Double
    var modifiedAt: Double
    var expiresAt: Double?

    init(_ metadata: ItemMetadata) {
        service = metadata.service
        account = metadata.account
        label = metadata.label
        attributes = metadata.attributes
        createdAt = metadata.createdAt.timeIntervalSince1970
        modifiedAt = metadata.modifiedAt.timeIntervalSince1970
        expiresAt = metadata.expiresAt?.timeIntervalSince1970
    }

    func encoded() throws -> SecureBytes {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = try encoder.encode(self)
        defer { data.resetBytes(in: 0..<data.count) }
        return SecureBytes(copying: data)
    }

    static func decode(_ plaintext: SecureBytes) throws -> ItemMetadata {
        let decoded = try plaintext.withUnsafeBytes { raw -> SealedMetadata in
            guard raw.count <= maximumEncodedBytes else { throw damaged }
            do {
                return try JSONDecoder().decode(SealedMetadata.self, from: Data(raw))
            } catch {
                throw damaged
            }
        }
        let key: ItemKey
        do { key = try ItemKey(storedService: decoded.service, account: decoded.account) } catch { throw damaged }
        return ItemMetadata(
            key: key, label: decoded.label, attributes: decoded.attributes,
            createdAt: Date(timeIntervalSince1970: decoded.createdAt),
            modifiedAt: Date(timeIntervalSince1970: decoded.modifiedAt),
            expiresAt: decoded.expiresAt.map(Date.init(timeIntervalSince1970:)))
    }

    private static var damaged: VaultError {
        VaultError.integrityFailure("an item's metadata opened but is not valid; the vault was written by a faulty build")
    }
}
