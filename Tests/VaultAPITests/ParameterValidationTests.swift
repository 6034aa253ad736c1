import BoundedJSON
import Testing
import VaultAPI
import VaultCrypto

/// Bad parameters become a `WireParameterError` that names the parameter and never quotes a secret.
@Suite(.timeLimit(.minutes(20))) struct ParameterValidationTests {
    private func decodeCall<M: VarlinkMethod>(_ method: M.Type, _ parameters: String) throws -> M.Request {
        let frame = Array(#"{"method":"\#(M.name)","parameters":\#(parameters)}"#.utf8)
        return try frame.withUnsafeBytes { try VarlinkWire.decodeCall(M.self, frame: $0) }
    }

    private func reason<M: VarlinkMethod>(_ method: M.Type, _ parameters: String) -> WireParameterError? {
        do {
            _ = try decodeCall(M.self, parameters)
            return nil
        } catch let error as WireParameterError {
            return error
        } catch {
            Issue.record("unexpected \(error)")
            return nil
        }
    }

    @Test func aMissingOrMistypedParameterIsNamed() {
        #expect(reason(VaultInterface.Retrieve.self, #"{"service":"s"}"#) == WireParameterError("account", "is missing"))
        #expect(reason(VaultInterface.Retrieve.self, #"{"service":1,"account":"a"}"#)?.parameter == "service")
        #expect(reason(VaultInterface.Store.self, #"{"service":"s","account":"a","secret":[1]}"#)?.reason == "secret must be a base64 string")
        #expect(reason(VaultInterface.Store.self, #"{"service":"s","account":"a","secret":"eA==","attributes":"x"}"#)?.parameter == "attributes")
        #expect(reason(SessionInterface.Save.self, #"{"service":"s","account":"a","tokenResponse":{},"provider":{"clientSecret":5}}"#)?.parameter
                == "provider.clientSecret")
    }

    @Test func aSecretThatIsNotBase64IsRefusedWithoutQuotingIt() {
        let error = reason(VaultInterface.Unlock.self, #"{"passphrase":"hunter2!"}"#)
        #expect(error == WireParameterError("passphrase", "is not valid base64"))
        #expect(error.map { !$0.reason.contains("hunter2") } == true)
        #expect(reason(VaultInterface.Unlock.self, #"{"passphrase":"aGk=\n"}"#)?.parameter == "passphrase")
    }

    @Test func secretsOverTheirLimitAreRefusedBeforeDecoding() {
        let long = String(repeating: "A", count: (4096 + 3) / 3 * 4 + 4)
        #expect(reason(VaultInterface.Unlock.self, #"{"passphrase":"\#(long)"}"#) == WireParameterError("passphrase", "is over the 4096-byte limit"))
        let huge = String(repeating: "A", count: (512 * 1024 + 2) / 3 * 4 + 4)
        #expect(reason(VaultInterface.Store.self, #"{"service":"s","account":"a","secret":"\#(huge)"}"#)
                == WireParameterError("secret", "is over the 512 KiB limit"))
        let exact = SecureBytes(count: 4096) { $0.initializeMemory(as: UInt8.self, repeating: 0xFE) }
        #expect(reason(VaultInterface.Unlock.self, #"{"passphrase":"\#(exact.base64EncodedString())"}"#) == nil)
    }

    @Test func aSecretGivenTwiceIsADuplicateKey() {
        let frame = Array(#"{"method":"org.sortedvault.vault.Unlock","parameters":{"passphrase":"eA==","passphrase":"eQ=="}}"#.utf8)
        #expect(throws: WireReplyError.self) { try frame.withUnsafeBytes { try VarlinkWire.decodeCall(VaultInterface.Unlock.self, frame: $0) } }
    }

    @Test func aNullOrAbsentOptionalSecretIsNil() throws {
        #expect(try decodeCall(VaultInterface.Unlock.self, #"{"passphrase":null}"#).passphrase == nil)
        #expect(try decodeCall(VaultInterface.Unlock.self, "{}").passphrase == nil)
    }
}
