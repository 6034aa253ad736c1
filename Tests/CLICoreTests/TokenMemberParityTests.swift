import Testing
import VaultAPI
import VaultSession

/// The token members Save diverts on the wire are those TokenResponse diverts from a provider's
/// answer: a member only one side knew would travel, or be parsed, as a `String`.
@Suite(.timeLimit(.minutes(20))) struct TokenMemberParityTests {
    @Test func saveAndTokenResponseDivertTheSameMembers() {
        #expect(Set(SessionInterface.Save.tokenMembers) == TokenResponse.tokenMembers)
        for member in SessionInterface.Save.tokenMembers {
            let limit = SessionInterface.Save.requestSecrets.limits["tokenResponse." + member]
            #expect(limit == TokenResponse.byteLimit(of: member), "\(member)")
            #expect(SessionInterface.Save.requestSecrets.text.contains("tokenResponse." + member))
        }
    }
}
