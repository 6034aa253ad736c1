import BoundedJSON
import Testing
import VaultAPI
import VaultCrypto

/// Every typed message written by `VarlinkWire` reads back as the same value, with its secret
/// members as base64 on the wire.
@Suite(.timeLimit(.minutes(20))) struct MessageRoundTripTests {
    let secret = SecureBytes(copying: Array(0..<255 as Range<UInt8>) + [0xFF, 0x00])

    private func text(_ bytes: WireBytes) -> String {
        bytes.withUnsafeBytes { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
    }

    private func json(_ bytes: WireBytes) throws -> [String: JSONValue] {
        try bytes.withUnsafeBytes { raw in
            try #require(JSONValue.parse(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)])).objectValue)
        }
    }

    @Test func aRetrieveCallIsTheMethodAndItsParameters() throws {
        let frame = VarlinkWire.encodeCall(VaultInterface.Retrieve.self, .init(service: "github", account: "ada"))
        #expect(text(frame) == #"{"method":"org.sortedvault.vault.Retrieve","parameters":{"service":"github","account":"ada"}}"#)
        frame.withUnsafeBytes { #expect($0.last == 0) }
        let request = try frame.withUnsafeBytes { raw in
            try VarlinkWire.decodeCall(VaultInterface.Retrieve.self, frame: UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]))
        }
        #expect(request == .init(service: "github", account: "ada"))
    }

    @Test func aRetrieveReplyCarriesItsSecretAsBase64AndDecodesItIntoSecureBytes() throws {
        let item = VaultInterface.Item(service: "s\"q", account: "a\n", label: "l", attributes: ["k": "v"], created: 1, modified: 2.5, expires: nil)
        let reply = VaultInterface.Retrieve.Reply(secret: secret, item: item)
        let frame = VarlinkWire.encodeReply(reply)
        let message = try json(frame)
        #expect(message["parameters"]?["secret"] == .string(secret.base64EncodedString()))
        #expect(message["parameters"]?["item"]?["created"] == .double(1))
        let decoded = try frame.withUnsafeBytes { raw in
            try VarlinkWire.decodeReply(VaultInterface.Retrieve.self, frame: UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]))
        }
        guard case .reply(let back, let continues) = decoded else { Issue.record("not a reply"); return }
        #expect(back == reply)
        #expect(!continues)
    }

    @Test func aPassphraseThatIsNotUTF8SurvivesTheWire() throws {
        let passphrase = SecureBytes(copying: [0xFF, 0xFE, 0x80, 0x00, 0x41])
        let frame = VarlinkWire.encodeCall(VaultInterface.Unlock.self, .init(passphrase: passphrase))
        #expect(try json(frame)["parameters"]?["passphrase"] == .string("//6AAEE="))
        let request = try frame.withUnsafeBytes { raw in
            try VarlinkWire.decodeCall(VaultInterface.Unlock.self, frame: UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]))
        }
        #expect(request.passphrase == passphrase)
    }

    @Test func anErrorReplyGivesItsNameAndParameters() throws {
        let frame = Array(#"{"error":"org.sortedvault.vault.NotFound","parameters":{"service":"s","account":"a"}}"#.utf8)
        let decoded = try frame.withUnsafeBytes { try VarlinkWire.decodeReply(VaultInterface.Retrieve.self, frame: $0) }
        guard case .error(let name, let parameters) = decoded else { Issue.record("not an error"); return }
        #expect(name == VaultInterface.Errors.notFound)
        #expect(parameters["service"] == "s")
    }

    @Test func anAutoLoginReplyWithAGrantRoundTrips() throws {
        let reply = SessionInterface.LoginOutcome(
            outcome: .valid, grant: .init(accessToken: secret, tokenType: "Bearer", expiresAt: 1_800_000_000, scopes: ["a", "b"]))
        let frame = VarlinkWire.encodeReply(reply, continues: true)
        let decoded = try frame.withUnsafeBytes { raw in
            try VarlinkWire.decodeReply(SessionInterface.AutoLogin.self, frame: UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]))
        }
        guard case .reply(let back, let continues) = decoded else { Issue.record("not a reply"); return }
        #expect(back == reply)
        #expect(continues)
    }

    /// Save's tokens are the provider's own JSON strings on the wire (not base64, as apps and older
    /// clients send them), and go from the frame into secure memory, out of the `JSONValue` object.
    @Test func saveCarriesItsTokensAsJSONTextAndDecodesThemIntoSecureMemory() throws {
        let token = SecureBytes(copying: Array(#"ey.J"\z/"#.utf8))
        let request = SessionInterface.Save.Request(service: "s", account: "a", tokenResponse: ["token_type": "Bearer", "expires_in": 60],
                                                    tokens: ["access_token": token, "refresh_token": SecureBytes(copying: [0x72])],
                                                    provider: .init(kind: "oauth2", tokenEndpoint: "https://x/token", clientId: "c"))
        let frame = VarlinkWire.encodeCall(SessionInterface.Save.self, request)
        let message = try json(frame)
        #expect(message["parameters"]?["tokenResponse"]?["access_token"] == .string(#"ey.J"\z/"#))
        #expect(message["parameters"]?["tokenResponse"]?["refresh_token"] == .string("r"))
        let decoded = try frame.withUnsafeBytes { raw in
            try VarlinkWire.decodeCall(SessionInterface.Save.self, frame: UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]))
        }
        #expect(decoded.tokens["access_token"] == token)
        #expect(decoded.tokenResponse == ["token_type": "Bearer", "expires_in": 60])
        #expect(decoded == request)
    }

    @Test func aSaveFromTheAnswersJSONTextKeepsItsTokensOutOfTheObject() throws {
        let answer = #"{"access_token":"a\/b","token_type":"Bearer","refresh_token":null,"expires_in":60}"#
        let request = try Array(answer.utf8).withUnsafeBytes { raw in
            try SessionInterface.Save.Request(service: "s", account: "a", tokenResponseJSON: raw, provider: .init(kind: "oauth2"))
        }
        #expect(request.tokens == ["access_token": SecureBytes(copying: Array("a/b".utf8))])
        #expect(request.tokenResponse == ["token_type": "Bearer", "refresh_token": .null, "expires_in": 60])
    }

    @Test(arguments: [#"{"access_token":"a\x"}"#, #"{"access_token":"a\ud800"}"#])
    func aTokenThatIsNotAValidJSONStringIsAnInvalidParameterNamingIt(_ answer: String) {
        #expect(throws: WireParameterError.self) {
            try Array(answer.utf8).withUnsafeBytes { raw in
                _ = try SessionInterface.Save.Request(service: "s", account: "a", tokenResponseJSON: raw, provider: .init(kind: "oauth2"))
            }
        }
        let frame = Array(#"{"method":"org.sortedvault.session.Save","parameters":{"service":"s","account":"a","tokenResponse":\#(answer),"provider":{"kind":"oauth2"}}}"#.utf8)
        do {
            _ = try frame.withUnsafeBytes { try VarlinkWire.decodeCall(SessionInterface.Save.self, frame: $0) }
            Issue.record("an invalid token string was accepted")
        } catch let error as WireParameterError {
            #expect(error.parameter == "tokenResponse.access_token")
            #expect(!error.reason.contains("a\\"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func everyOtherMessageRoundTrips() throws {
        try roundTrip(VaultInterface.Store.Request(service: "s", account: "a", secret: secret, label: "l", attributes: ["x": "y"], expires: 9.5))
        try roundTrip(VaultInterface.List.Reply(items: [.init(service: "s", account: "a", created: 1, modified: 2), .init(service: "t", account: "b", created: 3, modified: 4, expires: 5)]))
        try roundTrip(VaultInterface.Status.Reply(locked: false, keySources: ["key-file"], items: 3, logins: 1, queuedRevocations: 0, version: "0.1.0", autoLockMinutes: 15))
        try roundTrip(VaultInterface.ChangePassphrase.Request(old: SecureBytes(copying: [1]), new: SecureBytes(copying: [2, 3])))
        try roundTrip(SessionInterface.Save.Request(service: "s", account: "a", tokenResponse: ["access_token": "t", "expires_in": 60],
                                                    provider: .init(kind: "oauth2", tokenEndpoint: "https://x/token", clientId: "c",
                                                                    clientSecret: secret, apiKey: SecureBytes(copying: [7])),
                                                    maxLifetimeSeconds: 3600))
        try roundTrip(SessionInterface.Logout.Reply(wasLoggedIn: true, revoked: false, revocationQueued: true, providerCannotRevoke: false))
        try roundTrip(SessionInterface.Watch.Reply(event: .init(kind: .saved, service: "s", account: "a", at: 12)))
        try roundTrip(SessionInterface.List.Reply(logins: [.init(service: "s", account: "a", providerKind: "oidc", userId: "u", state: "valid",
                                                                 accessTokenExpiresAt: 1, refreshTokenExpiresAt: nil, absoluteExpiresAt: 2, hasRefreshToken: true)]))
    }

    /// Writes `value` as a message's parameters and reads it back with every declared secret diverted.
    private func roundTrip<T: WireCodable & Equatable>(_ value: T, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let frame = VarlinkWire.encodeReply(value)
        let limits = VaultInterface.callSecrets.merging(SessionInterface.callSecrets)
            .merging(VaultInterface.Retrieve.replySecrets).merging(SessionInterface.AutoLogin.replySecrets)
        let back = try frame.withUnsafeBytes { raw in
            let (message, secrets) = try VarlinkWire.parse(UnsafeRawBufferPointer(rebasing: raw[..<(raw.count - 1)]), maxDepth: 64, secrets: limits)
            return try T(from: WireParameters(message["parameters"]?.objectValue ?? [:], secrets: secrets))
        }
        #expect(back == value, sourceLocation: sourceLocation)
    }
}
