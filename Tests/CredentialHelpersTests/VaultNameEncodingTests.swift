import CredentialHelpers
import Foundation
import Testing

/// The encoding of names the vault refuses, against the vectors the Python backend is held to too.
@Suite(.timeLimit(.minutes(20))) struct VaultNameEncodingTests {
    struct Vector: Decodable { let name: String; let stored: String }
    struct Vectors: Decodable { let vectors: [Vector] }

    static let vectors: [Vector] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Support/vault-name-encoding.json")
        guard let data = FileManager.default.contents(atPath: path.path),
              let decoded = try? JSONDecoder().decode(Vectors.self, from: data) else { return [] }
        return decoded.vectors
    }()

    @Test func everyVectorIsStoredAsWrittenAndReadBackToItsName() {
        #expect(Self.vectors.count >= 10, "the vectors file was not read")
        for vector in Self.vectors {
            #expect(Array(VaultNameEncoding.stored(vector.name).utf8) == Array(vector.stored.utf8), "\(vector.name.debugDescription)")
            #expect(Array(VaultNameEncoding.original(vector.stored).utf8) == Array(vector.name.utf8), "\(vector.stored.debugDescription)")
        }
    }

    @Test func aStoredNameOutsideTheEncodingIsTakenAsItIs() {
        for stored in ["%sv:%", "%sv:%4", "%sv:%zz", "%sv:%FF", "%sv:é", "plain"] {
            #expect(VaultNameEncoding.original(stored) == stored, "\(stored)")
        }
    }
}
