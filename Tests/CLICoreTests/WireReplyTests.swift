import BoundedJSON
import Testing
import VaultAPI
import VaultCrypto
@testable import CLICore

/// The lean CLI decodes replies with VaultAPI's typed messages; these tests hold what it makes of a
/// reply, an error reply and a reply of the wrong shape to what the full client reports.
@Suite(.timeLimit(.minutes(20))) struct WireReplyTests {
    static func frame(_ bytes: WireBytes) -> WipedBuffer {
        let buffer = WipedBuffer(capacity: 16)
        bytes.withUnsafeBytes { raw in buffer.append(UnsafeRawBufferPointer(rebasing: raw.prefix(while: { $0 != 0 }))) }
        return buffer
    }

    static func frame(_ text: String) -> WipedBuffer {
        let buffer = WipedBuffer(capacity: 16)
        buffer.append(contentsOf: text.utf8)
        return buffer
    }

    @Test func aRetrieveReplysSecretArrivesByteForByte() throws {
        let secret = SecureBytes(copying: [0xFB, 0xFF, 0x00, 0x3F, 0xFE])
        let item = VaultInterface.Item(service: "s", account: "a", created: 1, modified: 2)
        let sent = VarlinkWire.encodeReply(VaultInterface.Retrieve.Reply(secret: secret, item: item))
        let reply = try WireReply.decode(VaultInterface.Retrieve.self, Self.frame(sent), errors: WireFailure.vault)
        #expect(reply.secret == secret)
        #expect(reply.item == item)
    }

    @Test func anAccessTokenOfAnyBytesArrivesByteForByte() throws {
        let token = SecureBytes(copying: Array("tok\"en\\".utf8) + [0xFF, 0x00])
        let grant = SessionInterface.Grant(accessToken: token, tokenType: "Bearer", expiresAt: 1.5e9, scopes: ["a"])
        let sent = VarlinkWire.encodeReply(SessionInterface.LoginOutcome(outcome: .valid, grant: grant))
        let reply = try WireReply.decode(SessionInterface.AutoLogin.self, Self.frame(sent), errors: WireFailure.session)
        #expect(reply.grant?.accessToken == token)
        #expect(reply.outcome == .valid)
    }

    @Test func anErrorReplyBecomesTheInterfacesFailure() {
        #expect(throws: WireFailure(.notFound, #"no item for service "s", account "a""#)) {
            try WireReply.decode(VaultInterface.Retrieve.self,
                                 Self.frame(#"{"error":"org.sortedvault.vault.NotFound","parameters":{"service":"s","account":"a"}}"#),
                                 errors: WireFailure.vault)
        }
        #expect(throws: WireFailure(.locked, "the vault is locked: run `sortedvault unlock`")) {
            try WireReply.decode(SessionInterface.AutoLogin.self, Self.frame(#"{"error":"org.sortedvault.session.Locked"}"#),
                                 errors: WireFailure.session)
        }
    }

    @Test(arguments: ["", "{", #"{"parameters":{"secret":"abc"}}"#, #"{"parameters":{}} trailing"#, #"{"parameters":[]}"#,
                      #"{"parameters":{"secret":"!!!!","item":{}}}"#])
    func aReplyOfTheWrongShapeIsAMalformedReply(text: String) {
        #expect(throws: WireFailure(.failure, "the daemon sent a malformed Retrieve reply")) {
            try WireReply.decode(VaultInterface.Retrieve.self, Self.frame(text), errors: WireFailure.vault)
        }
    }
}
