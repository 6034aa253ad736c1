import SortedVault
import Testing

@Suite(.timeLimit(.minutes(20))) struct SocketDiscoveryTests {
    @Test func sortedVaultSocketComesFirst() throws {
        let environment = ["SORTEDVAULT_SOCKET": "/srv/vault/socket", "XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/ada"]
        #expect(try SortedVault.socketPath { environment[$0] } == "/srv/vault/socket")
    }

    @Test func theSessionsRuntimeDirectoryIsTheDefault() throws {
        let environment = ["XDG_RUNTIME_DIR": "/run/user/1000", "HOME": "/home/ada"]
        #expect(try SortedVault.socketPath { environment[$0] } == "/run/user/1000/sortedvault/socket")
    }

    @Test func withNeitherTheErrorNamesBoth() throws {
        let environment = ["HOME": "/var/lib/service"]  // a system service: no login session
        let error = try #require(throws: VaultError.self) { try SortedVault.socketPath { environment[$0] } }
        #expect(error.code == .unavailable)
        #expect(error.reason.contains("SORTEDVAULT_SOCKET"))
        #expect(error.reason.contains("XDG_RUNTIME_DIR"))
    }
}
