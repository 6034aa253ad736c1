import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession

/// The redirect's query, parsed bounded and strict, and the state compared in constant time.
@Suite(.timeLimit(.minutes(20))) struct AuthorizationCallbackTests {
    func parse(_ query: String) throws -> AuthorizationCallback { try AuthorizationCallback(query: secure(query)) }

    @Test func theCodeAndStateArePercentDecodedIntoSecureMemory() throws {
        let callback = try parse("code=a%2Fb%2bc+d&state=s%3D1&session_state=ignored&scope=openid")
        #expect(text(callback.code) == "a/b+c d")
        #expect(text(callback.state) == "s=1")
        #expect(callback.error == nil)
    }

    @Test func anErrorAnswerIsReadAsPrintableText() throws {
        let callback = try parse("error=access_denied&error_description=The+user+said+no&state=s")
        #expect(callback.error == "access_denied" && callback.errorDescription == "The user said no" && callback.code == nil)
        #expect(try parse("error=x&error_description=%0Aforged+line").errorDescription == nil, "a control character is not shown")
    }

    @Test(arguments: [
        "code=a&code=b&state=s",          // two codes: two readers could pick different ones
        "code=a&state=s&state=t",
        "code=a%2&state=s",               // a broken escape
        "code=a%zz&state=s",
        "error=%01&state=s",              // an unprintable error code
    ])
    func anAmbiguousOrMalformedCallbackIsRefused(_ query: String) {
        #expect(vaultError { _ = try parse(query) }?.code == .invalidArgument, "\(query)")
    }

    @Test func theCallbackIsBounded() {
        let many = (0..<(AuthorizationCallback.maximumParameters + 1)).map { "x\($0)=1" }.joined(separator: "&")
        #expect(vaultError { _ = try parse(many) }?.code == .invalidArgument)
        let long = "code=" + String(repeating: "a", count: AuthorizationCallback.maximumBytes)
        #expect(vaultError { _ = try parse(long) }?.code == .invalidArgument)
        #expect((try? parse("")) != nil && (try? parse("&&")) != nil, "empty parts are skipped")
    }

    @Test func theStateMatchesOnlyByteForByte() throws {
        let expected = secure("Yx3kQ2m0pR7s")
        #expect(try parse("state=Yx3kQ2m0pR7s").hasState(expected))
        for other in ["state=Yx3kQ2m0pR7t", "state=Yx3kQ2m0pR7", "state=Yx3kQ2m0pR7sX", "state=", "code=c"] {
            #expect(try !parse(other).hasState(expected), "\(other)")
        }
    }

    @Test func theStateComparisonIsSodiumsConstantTimeCompare() {
        // hasState compares with SecureBytes' ==, which is sodium_memcmp over equal lengths: the
        // time it takes does not depend on where the first differing byte is.
        let a = secure(String(repeating: "a", count: 43))
        #expect(a == secure(String(repeating: "a", count: 43)))
        #expect(!(a == secure("b" + String(repeating: "a", count: 42))))
        #expect(!(a == secure(String(repeating: "a", count: 42) + "b")))
    }

    @Test func pkceHelpersMatchRFC7636AppendixB() {
        // RFC 7636 Appendix B: the verifier "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk" has the
        // S256 challenge "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM".
        let verifier = secure("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(text(verifier.sha256().base64URLEncoded()) == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        let octets: [UInt8] = [116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77,
                               105, 214, 191, 240, 91, 88, 5, 88, 83, 132, 141, 121]
        #expect(text(SecureBytes(copying: octets).base64URLEncoded()) == "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
    }
}
