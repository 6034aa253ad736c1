import BoundedJSON
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
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
/// The one encoding of an item's metadata at rest, for the SQLite vault and the fleet's PostgreSQL rows.
public struct SealedMetadata: Codable {
    static let maximumEncodedBytes = 256 * 1024

    var service: String
    var account: String
    var label: String?
    var attributes: [String: String]
    var createdAt: Double
    var modifiedAt: Double
    var expiresAt: Double?

    public init(_ metadata: ItemMetadata) {
        service = metadata.service
        account = metadata.account
        label = metadata.label
        attributes = metadata.attributes
        createdAt = metadata.createdAt.timeIntervalSince1970
        modifiedAt = metadata.modifiedAt.timeIntervalSince1970
        expiresAt = metadata.expiresAt?.timeIntervalSince1970
    }

    /// The fields of a parsed record, or nil when one is missing or of the wrong type.
    private init?(_ value: JSONValue) {
        guard let object = value.objectValue,
              let service = object["service"]?.stringValue, let account = object["account"]?.stringValue,
              let createdAt = object["createdAt"]?.doubleValue, let modifiedAt = object["modifiedAt"]?.doubleValue
        else { return nil }
        var attributes: [String: String] = [:]
        guard let attributeValues = object["attributes"]?.objectValue else { return nil }
        for (name, value) in attributeValues {
            guard let text = value.stringValue else { return nil }
            attributes[name] = text
        }
        func optional<T>(_ key: String, _ read: (JSONValue) -> T?) -> T?? {
            guard let value = object[key], value != .null else { return .some(nil) }
            return read(value).map { .some($0) }
        }
        guard let label = optional("label", \.stringValue), let expiresAt = optional("expiresAt", \.doubleValue) else { return nil }
        self.service = service
        self.account = account
        self.label = label
        self.attributes = attributes
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.expiresAt = expiresAt
    }

    public func encoded() throws -> SecureBytes {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var data = try encoder.encode(self)
        defer { data.resetBytes(in: 0..<data.count) }
        return SecureBytes(copying: data)
    }

    /// Reads what ``encoded()`` wrote (JSONEncoder's output, keys sorted) with BoundedJSON's parser,
    /// straight from secure memory: it is on every read's path, where Foundation's `JSONDecoder`
    /// cost several times more (docs/speed.md). Absent and `null` optionals are nil, unknown keys are
    /// ignored, anything else out of shape is damage — as `JSONDecoder` decoded this type.
    public static func decode(_ plaintext: SecureBytes) throws -> ItemMetadata {
        let decoded = try plaintext.withUnsafeBytes { raw -> SealedMetadata in
            guard raw.count <= maximumEncodedBytes, let value = try? JSONValue.parse(raw),
                  let decoded = SealedMetadata(value) else { throw damaged }
            return decoded
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
