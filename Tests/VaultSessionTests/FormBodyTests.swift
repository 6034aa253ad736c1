import Foundation
import Testing
import VaultCrypto
@testable import VaultSession

@Suite(.timeLimit(.minutes(20))) struct FormBodyTests {
    @Test func reservedCharactersArePercentEncodedAndSpacesArePlus() {
        #expect(FormBody.encode(Array("a b&c=d+e/f?g#h%i".utf8)) == "a+b%26c%3Dd%2Be%2Ff%3Fg%23h%25i")
        #expect(FormBody.encode(Array("é~:".utf8)) == "%C3%A9%7E%3A")
        #expect(FormBody.encode(Array("AZaz09-._*".utf8)) == "AZaz09-._*")
        #expect(FormBody.encode(Array("\n\0".utf8)) == "%0A%00")
    }

    @Test func fieldsAreJoinedWithAmpersands() {
        var form = FormBody()
        form.add("grant_type", "refresh_token")
        form.add("refresh_token", secret: secure("r/1+2 3"))
        form.add("scope", "")
        #expect(text(form.finish()) == "grant_type=refresh_token&refresh_token=r%2F1%2B2+3&scope=")
    }

    @Test func anEmptyFormIsEmpty() {
        #expect(FormBody().finish().count == 0)
    }

    @Test func basicAuthorizationIsBase64OfTheFormEncodedIDAndSecret() {
        let header = FormBody.basicAuthorization(clientID: "my client:1", secret: secure("s3cr%t é"))
        let expected = "Basic " + Data("my+client%3A1:s3cr%25t+%C3%A9".utf8).base64EncodedString()
        #expect(text(header) == expected)
    }
}
