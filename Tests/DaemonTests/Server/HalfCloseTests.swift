import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// A client that writes its request and shuts down its writing side still gets its answer.
    @Suite struct HalfCloseTests {
        static let status = #"{"method":"org.sortedvault.vault.Status"}"# + "\0"

        @Test func socatWithARequestOnStandardInputPrintsTheReply() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            // `printf '{"method":"org.sortedvault.vault.Status"}\0' | socat - UNIX-CONNECT:$SOCK`
            let (status, output, errors) = try Subprocess.run(["/usr/bin/socat", "-", "UNIX-CONNECT:" + cli.socket],
                                                              environment: cli.environment, input: Data(Self.status.utf8))
            let text = String(decoding: output, as: UTF8.self)
            #expect(status == 0, "socat: \(String(decoding: errors, as: UTF8.self))")
            #expect(text.contains(#""locked":false"#), "socat printed \(text.debugDescription)")
            #expect(text.hasSuffix("\0"))
        }

        @Test func aRawClientThatShutsDownItsWriteSideGetsEveryReplyThenEOF() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            let client = try RawSocket(path: cli.socket)
            client.send(frame(#"{"method":"org.sortedvault.vault.Status"}"#) + frame(#"{"method":"org.sortedvault.vault.List"}"#))
            client.shutdownWrite()
            let first = client.readReply(), second = client.readReply()
            #expect((first?["parameters"] as? [String: Any])?["locked"] as? Bool == false, "\(String(describing: first))")
            #expect((second?["parameters"] as? [String: Any])?["items"] is [Any], "\(String(describing: second))")
            #expect(client.peerClosed())
        }
    }
}
