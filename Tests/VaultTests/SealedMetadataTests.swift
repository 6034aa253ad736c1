import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import Vault

/// Sealed metadata is read with BoundedJSON's parser, not `JSONDecoder`: every record written by
/// `encoded()` (JSONEncoder) must read back exactly, and anything else must be damage.
@Suite(.timeLimit(.minutes(20))) struct SealedMetadataTests {
    static let items: [ItemMetadata] = [
        ItemMetadata(key: try! ItemKey(service: "com.example.api", account: "ada@example.com"), label: nil, attributes: [:],
                     createdAt: Date(timeIntervalSince1970: 1_800_000_000), modifiedAt: Date(timeIntervalSince1970: 1_800_000_000.123456),
                     expiresAt: nil),
        ItemMetadata(key: try! ItemKey(service: "https://git.example/a/b", account: "caf\u{E9} \"quoted\" \\ back"),
                     label: "Ünïcode / \u{1F511}", attributes: ["kind": "token", "empty": "", "slash": "a/b"],
                     createdAt: Date(timeIntervalSince1970: 0.1), modifiedAt: Date(timeIntervalSince1970: 1e-7),
                     expiresAt: Date(timeIntervalSince1970: 4_102_444_800.999)),
    ]

    @Test(arguments: items)
    func whatEncodedWroteReadsBackExactly(_ item: ItemMetadata) throws {
        let read = try SealedMetadata.decode(try SealedMetadata(item).encoded())
        #expect(read == item)
        #expect(Array(read.service.utf8) == Array(item.service.utf8) && Array(read.account.utf8) == Array(item.account.utf8))
    }

    @Test func aNullLabelOrExpiryAndUnknownKeysReadAsJSONDecoderReadThem() throws {
        let text = #"{"account":"a","attributes":{},"createdAt":1,"expiresAt":null,"future":[1,2],"label":null,"modifiedAt":2.5,"service":"s"}"#
        let read = try SealedMetadata.decode(SecureBytes(copying: Array(text.utf8)))
        #expect(read.label == nil && read.expiresAt == nil && read.modifiedAt == Date(timeIntervalSince1970: 2.5))
    }

    @Test(arguments: [
        #"{"account":"a","createdAt":1,"modifiedAt":2,"service":"s"}"#,                       // attributes missing
        #"{"account":"a","attributes":{"k":1},"createdAt":1,"modifiedAt":2,"service":"s"}"#,   // attribute not a string
        #"{"account":"a","attributes":{},"createdAt":"1","modifiedAt":2,"service":"s"}"#,     // date as a string
        #"{"account":"a","attributes":{},"createdAt":1,"label":3,"modifiedAt":2,"service":"s"}"#,
        #"{"account":"a","attributes":{},"createdAt":1,"modifiedAt":2,"service":"s"} x"#,
        #"["s","a"]"#, "",
    ])
    func anythingElseIsDamage(_ text: String) {
        #expect(throws: VaultError.self) { try SealedMetadata.decode(SecureBytes(copying: Array(text.utf8))) }
    }
}
