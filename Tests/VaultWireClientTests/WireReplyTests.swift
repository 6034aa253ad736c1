import BoundedJSON
import Testing
import VaultCrypto
@testable import VaultWireClient

/// The lean CLI reads replies without turning a secret into a `String`: these tests hold its
/// scanner to what BoundedJSON (the daemon's parser) accepts and decodes.
@Suite struct WireReplyTests {
    static func frame(_ text: String) -> WipedBuffer {
        let buffer = WipedBuffer(capacity: 16)
        buffer.append(contentsOf: text.utf8)
        return buffer
    }

    static func bytes(_ secret: SecureBytes?) -> [UInt8]? { secret?.withUnsafeBytes { Array($0) } }

    @Test func anAccessTokenIsUnescapedIntoSecureMemoryAsBoundedJSONReadsIt() throws {
        let text = #"{"parameters":{"outcome":"valid","grant":{"accessToken":"a\"b\\c\/d\u00e9\ud83d\ude00\n","tokenType":"Bearer","expiresAt":1.5e9}}}"#
        let reply = try WireReply(Self.frame(text), decodeError: WireFailure.session)
        let expected = try #require(JSONValue.parse(Array(text.utf8))["parameters"]?["grant"]?["accessToken"]?.stringValue)
        #expect(Self.bytes(reply.secretText("grant", "accessToken")) == Array(expected.utf8))
        #expect(reply.value("grant", "expiresAt")?.doubleValue == 1.5e9)
        #expect(reply.value("outcome")?.stringValue == "valid")
    }

    @Test func anErrorReplyBecomesTheInterfacesFailure() {
        #expect(throws: WireFailure(.notFound, #"no item for service "s", account "a""#)) {
            try WireReply(Self.frame(#"{"error":"org.sortedvault.vault.NotFound","parameters":{"service":"s","account":"a"}}"#),
                          decodeError: WireFailure.vault)
        }
        #expect(throws: WireFailure(.locked, "the vault is locked: run `sortedvault unlock`")) {
            try WireReply(Self.frame(#"{"error":"org.sortedvault.session.Locked"}"#), decodeError: WireFailure.session)
        }
    }

    @Test(arguments: [
        "", "{", #"{"parameters":{"secret":"abc}}"#, #"{"parameters":{}} trailing"#, "{\"parameters\":{\"s\":\"a\u{01}b\"}}",
        #"{"parameters":{"s":"\x"}}"#, #"{"parameters":{"s":"\u12"}}"#, #"{"parameters":{"n":01.}}"#, #"{"parameters":[1,]}"#,
        #"{"parameters":{"t":tru}}"#, "[]", String(repeating: "[", count: 70) + String(repeating: "]", count: 70),
    ])
    func aMalformedReplyIsRefusedNotGuessedAt(text: String) {
        #expect(throws: WireFailure.self) { try WireReply(Self.frame(text), decodeError: WireFailure.vault) }
    }

    @Test func aRepeatedMemberReadsAsItsLastValueAndEscapedKeysMatch() throws {
        let reply = try WireReply(Self.frame(#"{"parameters":{"outcome":"offline","outcome":"valid","re\u0061son":"x"}}"#),
                                  decodeError: WireFailure.session)
        #expect(reply.value("outcome")?.stringValue == "valid")
        #expect(reply.value("reason")?.stringValue == "x")
        #expect(!reply.has("grant"))
    }
}
