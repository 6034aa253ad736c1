import Foundation
import Testing
import VaultCore
import VaultCrypto
import VaultTesting

/// One rule for names (NFC, refused otherwise) and one identity (the exact UTF-8 bytes), so that no
/// two different byte strings can ever be one item, one login, one lock or one refresh flight.
@Suite(.timeLimit(.minutes(20))) struct ItemKeyNameTests {
    /// Canonically equivalent pairs: (the NFC spelling, another spelling of the same text).
    static let equivalentPairs: [(nfc: String, other: String, what: String)] = [
        ("com.Kiosk", "com.\u{212A}iosk", "K and KELVIN SIGN"),
        ("\u{C5}ngstr\u{F6}m", "\u{212B}ngstr\u{F6}m", "Å and ANGSTROM SIGN"),
        ("\u{C5}sa", "A\u{30A}sa", "Å and A + COMBINING RING ABOVE"),
        ("\u{3A9}mega", "\u{2126}mega", "Ω and OHM SIGN"),
        ("caf\u{E9}", "cafe\u{301}", "é precomposed and e + COMBINING ACUTE"),
    ]

    @Test(arguments: equivalentPairs.indices)
    func foundationNormalizesEachPairToTheSameNFCBytesOnThisPlatform(_ index: Int) {
        let pair = Self.equivalentPairs[index]
        #expect(pair.other == pair.nfc, "Swift's String == treats \(pair.what) as equal: the reason identities compare bytes")
        #expect(!pair.other.utf8.elementsEqual(pair.nfc.utf8))
        #expect(pair.other.precomposedStringWithCanonicalMapping.utf8.elementsEqual(pair.nfc.utf8), "\(pair.what)")
        #expect(pair.nfc.precomposedStringWithCanonicalMapping.utf8.elementsEqual(pair.nfc.utf8), "\(pair.what)")
    }

    @Test(arguments: equivalentPairs.indices)
    func aNameThatNFCWouldChangeIsRefusedAsAServiceAndAsAnAccount(_ index: Int) throws {
        let pair = Self.equivalentPairs[index]
        _ = try ItemKey(service: pair.nfc, account: pair.nfc)
        for (service, account, field) in [(pair.other, "ada", "service"), ("com.sorted.api", pair.other, "account")] {
            do {
                _ = try ItemKey(service: service, account: account)
                Issue.record("\(pair.what) was accepted as a \(field)")
            } catch let error as VaultError {
                #expect(error.code == .invalidArgument)
                #expect(error.reason.hasPrefix(field) && error.reason.contains("NFC"), "\(error.reason)")
            }
            #expect(throws: VaultError.self) { try ItemKey.checkName(pair.other, what: field) }
        }
    }

    @Test(arguments: equivalentPairs.indices)
    func keysAreEqualOnlyWhenTheirBytesAreEqual(_ index: Int) throws {
        let pair = Self.equivalentPairs[index]
        let nfc = try ItemKey(service: pair.nfc, account: "ada")
        // A name read back from storage is not re-checked against the NFC rule: it must still
        // never alias the NFC name.
        let other = try ItemKey(storedService: pair.other, account: "ada")
        #expect(nfc != other, "\(pair.what)")
        #expect(Set([nfc, other]).count == 2)
        var dictionary: [ItemKey: String] = [nfc: "victim"]
        #expect(dictionary[other] == nil, "a dictionary keyed by ItemKey found \(pair.what) under the other spelling")
        dictionary[other] = "attacker"
        #expect(dictionary[nfc] == "victim")
        #expect(nfc == (try ItemKey(service: pair.nfc, account: "ada")))
        #expect(nfc.hashValue == (try ItemKey(service: pair.nfc, account: "ada")).hashValue)
        let accounts = try ItemKey(service: "s", account: pair.nfc)
        #expect(accounts != (try ItemKey(storedService: "s", account: pair.other)))
    }

    @Test func theNameBoundaryIsPartOfTheIdentity() throws {
        #expect(try ItemKey(service: "ab", account: "c") != ItemKey(service: "a", account: "bc"))
        #expect(Set([try ItemKey(service: "ab", account: "c"), try ItemKey(service: "a", account: "bc")]).count == 2)
    }

    @Test func theReservedNamespaceIsDecidedByBytes() throws {
        // "/" followed by a combining mark is one Character, so String.hasPrefix says no; the bytes
        // still begin with "sortedvault/".
        let tricky = try ItemKey(service: "sortedvault/\u{301}session/x", account: "a")
        #expect(tricky.isReserved)
        #expect(try ItemKey(service: "sortedvault/session/x", account: "a").isReserved)
        #expect(try !ItemKey(service: "sortedvaultx/session", account: "a").isReserved)
    }

    @Test func theInMemoryStoreKeepsCanonicallyEquivalentNamesApart() async throws {
        let store = InMemoryTokenStore(clock: ManualClock())
        let nfc = try ItemKey(service: "com.Kiosk", account: "ada")
        try await store.store(SecureBytes(copying: Array("victim".utf8)), for: nfc, options: .none)
        let other = try ItemKey(storedService: "com.\u{212A}iosk", account: "ada")
        await #expect(throws: VaultError(.notFound, "")) { try await store.retrieve(other) }
        #expect(try await store.list(service: "com.\u{212A}iosk").isEmpty)
    }
}
