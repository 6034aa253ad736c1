import Foundation
import TestSupport
import Testing
import Varlink

extension DaemonSuite {
    /// The `.varlink` files are the contract: a running daemon serves them byte for byte (they are
    /// embedded at build time; there is no Swift copy to drift).
    @Suite struct InterfaceFileTests {
        @Test func getInterfaceDescriptionIsTheInterfaceFileByteForByte() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            defer { _ = cli.stopDaemon() }
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for interface in ["org.sortedvault.vault", "org.sortedvault.session"] {
                let file = try Data(contentsOf: URL(fileURLWithPath: CLIHarness.repository + "/interfaces/\(interface).varlink"))
                let reply = try connection.call("org.varlink.service.GetInterfaceDescription", ["interface": .string(interface)])
                let served = try #require(reply["description"]?.stringValue)
                #expect(Array(served.utf8) == [UInt8](file), "the daemon's description of \(interface) is not interfaces/\(interface).varlink")
            }
        }
    }
}
