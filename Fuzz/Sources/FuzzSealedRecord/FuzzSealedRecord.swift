@_spi(Fuzzing) import Vault
import Foundation
import FuzzSupport
import VaultCore
import VaultCrypto

/// The stored forms a vault reads back: a row's sealed metadata and secret, the metadata JSON
/// inside the box, and the key envelope (vault header). A store is untrusted, so:
/// - bytes presented as a stored row never open: without the key, anything fails closed with an
///   integrity error (and never another error, or a crash);
/// - metadata plaintext sealed under the key opens to the same plaintext, and decodes to an item
///   or to an integrity error; a decoded item encodes and decodes to itself;
/// - a header either is refused or encodes to a header that decodes to the same encoding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSealedRecord(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let (selector, rest) = split(data, size)
    switch selector % 3 {
    case 0:
        requireFailsClosed { _ = try StoredRowFuzzing.openMetadata(rest, master: master, lookup: lookup, revision: 1) }
        requireFailsClosed { _ = try StoredRowFuzzing.openSecret(rest, master: master, lookup: lookup, revision: 1) }
    case 1:
        let sealed: [UInt8]
        do { sealed = try StoredRowFuzzing.sealMetadata(SecureBytes(copying: rest), master: master, lookup: lookup, revision: 2) } catch {
            fatalError("fuzz contract broken: sealing failed (\(error))")
        }
        do {
            let item = try StoredRowFuzzing.openMetadata(sealed, master: master, lookup: lookup, revision: 2)
            let encoded = try StoredRowFuzzing.encodeMetadata(item)
            let resealed = try StoredRowFuzzing.sealMetadata(encoded, master: master, lookup: lookup, revision: 3)
            let again = try StoredRowFuzzing.openMetadata(resealed, master: master, lookup: lookup, revision: 3)
            require(again.key == item.key && again.label == item.label && again.attributes == item.attributes,
                    "an item's names, label or attributes changed on encoding")
            for (before, after) in [(item.createdAt, again.createdAt), (item.modifiedAt, again.modifiedAt)] {
                require(sameInstant(before, after), "an item's dates changed on encoding")
            }
            require((item.expiresAt == nil) == (again.expiresAt == nil), "an item's expiry appeared or vanished on encoding")
            if let before = item.expiresAt, let after = again.expiresAt { require(sameInstant(before, after), "an item's expiry changed on encoding") }
            requireFailsClosed { _ = try StoredRowFuzzing.openMetadata(sealed, master: master, lookup: lookup, revision: 3) }
        } catch let error as VaultError {
            require(error.code == .integrityFailure, "damaged metadata failed with \(error.code), not integrityFailure")
        } catch {
            fatalError("fuzz contract broken: damaged metadata failed with \(type(of: error)), not a VaultError")
        }
    default:
        guard let encoded = try? StoredRowFuzzing.reencodeHeader(rest) else { return 0 }
        do {
            let again = try StoredRowFuzzing.reencodeHeader(encoded)
            require(again == encoded, "a header's encoding is not stable")
        } catch {
            fatalError("fuzz contract broken: a header the vault wrote is refused (\(error))")
        }
    }
    return 0
}

/// A fixed key: the fuzzer plays a store that holds rows of this vault but not its key.
let master = SecureBytes(copying: (0..<32).map { UInt8($0) })
let lookup = (0..<32).map { UInt8(255 - $0) }

private func requireFailsClosed(_ body: () throws -> Void) {
    do {
        try body()
        fatalError("fuzz contract broken: bytes not sealed under the vault's key opened")
    } catch let error as VaultError {
        require(error.code == .integrityFailure, "a forged row failed with \(error.code), not integrityFailure")
    } catch {
        fatalError("fuzz contract broken: a forged row failed with \(type(of: error)), not a VaultError")
    }
}

/// Dates go through `Date`'s reference-date arithmetic both ways; allow for its last-place rounding.
private func sameInstant(_ a: Date, _ b: Date) -> Bool {
    let x = a.timeIntervalSince1970, y = b.timeIntervalSince1970
    return x == y || abs(x - y) <= 1e-9 * max(1, abs(x), abs(y))
}
