import Foundation
import TestSupport
import Testing
import Varlink

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Every bad input a client can send, against a live daemon; after each, a second client is served.
    @Suite struct BadInputTests {
        /// A fresh vault and daemon for each test; the harness kills it at the end.
        static var shared: CLIHarness {
            get throws {
                let cli = try CLIHarness()
                try cli.initKeyFileVault()
                try cli.startDaemon()
                return cli
            }
        }

        /// A second, well-behaved client gets a correct answer.
        func secondClientIsServed(_ cli: CLIHarness, after what: String) throws {
            var lastError: Error?
            for _ in 0..<50 {  // the daemon may still be closing the attacker's connections
                do {
                    let connection = try VarlinkConnection(unixSocketPath: cli.socket, timeout: .seconds(5))
                    defer { connection.close() }
                    let reply = try connection.call("org.sortedvault.vault.Status", [:])
                    #expect(reply["locked"] == .bool(false), "after \(what)")
                    return
                } catch {
                    lastError = error
                    usleep(20_000)
                }
            }
            Issue.record("after \(what), a second client was not served: \(String(describing: lastError))")
        }

        @Test func anOversizedFrameIsRefused() throws {
            let cli = try Self.shared
            let attacker = try RawSocket(path: cli.socket)
            attacker.send(Array(repeating: UInt8(ascii: " "), count: (1 << 20) + 4096))
            #expect(attacker.peerClosed() || attacker.readReply() != nil)
            try secondClientIsServed(cli, after: "an oversized frame")
        }

        @Test func aFrameWithNoNULThenEOFGetsNoReply() throws {
            let cli = try Self.shared
            let attacker = try RawSocket(path: cli.socket)
            attacker.send(Array(#"{"method":"org.sortedvault.vault.Status"}"#.utf8))
            attacker.shutdownWrite()
            #expect(attacker.readReply() == nil)
            try secondClientIsServed(cli, after: "a frame with no NUL")
        }

        static let malformed: [String: [UInt8]] = {
            let invalidUTF8: [UInt8] = Array(#"{"method":"org.sortedvault.vault.Status","parameters":{"x":""#.utf8) + [0xFF, 0xFE] + Array(#""}}"#.utf8) + [0]
            let deep: [UInt8] = Array(repeating: UInt8(ascii: "["), count: 100_000) + [0]
            return [
                "invalid JSON": frame(#"{"method": "#),
                "invalid UTF-8": invalidUTF8,
                "100,000-deep nesting": deep,
                "not an object": frame("[1,2,3]"),
                "no method": frame(#"{"parameters":{}}"#),
                "method not a string": frame(#"{"method":42}"#),
            ]
        }()

        /// Each gets its error reply, also when the client shut down its writing side right after
        /// sending (before, a half-close made the daemon drop the connection unanswered).
        @Test(arguments: malformed.keys.sorted(), [false, true])
        func malformedMessagesGetAnErrorReplyThenTheConnectionCloses(name: String, halfClose: Bool) throws {
            let bytes = Self.malformed[name]!
            let cli = try Self.shared
            let attacker = try RawSocket(path: cli.socket)
            attacker.send(bytes)
            if halfClose { attacker.shutdownWrite() }
            let reply = attacker.readReply()
            #expect(reply?["error"] as? String == "org.sortedvault.varlink.InvalidMessage", "\(name): \(String(describing: reply))")
            #expect(attacker.peerClosed(), "\(name): the connection stayed open")
            try secondClientIsServed(cli, after: name)
        }

        static let methods: [(String, [String: JSONValue])] = [
            ("Store", ["service": "s", "account": "a", "secret": "eA==", "label": "l", "attributes": ["k": "v"], "expires": .double(4_000_000_000)]),
            ("Retrieve", ["service": "s", "account": "a"]),
            ("Delete", ["service": "s", "account": "a"]),
            ("List", ["service": "s"]),
            // Passphrases are base64 of their bytes on the wire ("x", "y").
            ("Unlock", ["passphrase": "eA=="]),
            ("ChangePassphrase", ["old": "eA==", "new": "eQ=="]),
        ]

        @Test func aWrongTypeAndAMissingFieldForEachParameterAreInvalidParameter() throws {
            let cli = try Self.shared
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            // Unlock without a passphrase asks the key file or keyring again.
            let optional: Set<String> = ["label", "attributes", "expires", "service@List", "passphrase@Unlock"]
            for (method, parameters) in Self.methods {
                for name in parameters.keys {
                    var wrongType = parameters
                    wrongType[name] = name == "attributes" ? "not an object" : .array([.int(1)])
                    try expectInvalid(connection, method, wrongType, name)
                    if !optional.contains(name) && !optional.contains("\(name)@\(method)") {
                        var missing = parameters
                        missing[name] = nil
                        try expectInvalid(connection, method, missing, name)
                    }
                }
            }
            try secondClientIsServed(cli, after: "wrong types and missing fields")
        }

        private func expectInvalid(_ connection: VarlinkConnection, _ method: String, _ parameters: [String: JSONValue], _ name: String) throws {
            do {
                _ = try connection.call("org.sortedvault.vault." + method, parameters)
                Issue.record("\(method) with a bad \(name) succeeded")
            } catch let error as VarlinkError {
                #expect(error.name == "org.sortedvault.vault.InvalidParameter", "\(method) with a bad \(name): \(error.name)")
                #expect(error.parameters["parameter"] == .string(name), "\(method) blamed \(String(describing: error.parameters["parameter"])) for \(name)")
            }
        }

        @Test func unknownMethodsAndInterfacesAreStandardErrors() throws {
            let cli = try Self.shared
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for (method, expected) in [
                ("org.sortedvault.vault.Nope", "org.varlink.service.MethodNotFound"),
                ("org.sortedvault.nope.Store", "org.varlink.service.InterfaceNotFound"),
                ("org.varlink.service.Nope", "org.varlink.service.MethodNotFound"),
                ("no-dots", "org.varlink.service.InterfaceNotFound"),
            ] {
                #expect(errorName { _ = try connection.call(method, [:]) } == expected, "\(method)")
            }
            try secondClientIsServed(cli, after: "unknown methods")
        }

        @Test func namesWithControlCharactersAreRefusedAndPathLikeNamesAreJustNames() throws {
            let cli = try Self.shared
            let connection = try VarlinkConnection(unixSocketPath: cli.socket)
            defer { connection.close() }
            for bad in ["line\nbreak", "nul\u{0}byte"] {
                #expect(errorName {
                    _ = try connection.call("org.sortedvault.vault.Store", ["service": .string(bad), "account": "a", "secret": "eA=="])
                } == "org.sortedvault.vault.InvalidParameter")
                #expect(errorName {
                    _ = try connection.call("org.sortedvault.vault.Retrieve", ["service": "s", "account": .string(bad)])
                } == "org.sortedvault.vault.InvalidParameter")
            }
            // "/" and ".." are ordinary characters in a name: they never become paths.
            let before = Set((try? FileManager.default.contentsOfDirectory(atPath: cli.dataDir)) ?? [])
            for name in ["../../etc/passwd", "a/b", "..", "/"] {
                _ = try connection.call("org.sortedvault.vault.Store", ["service": .string(name), "account": .string(name), "secret": "eA=="])
                let reply = try connection.call("org.sortedvault.vault.Retrieve", ["service": .string(name), "account": .string(name)])
                #expect(reply["secret"] == "eA==")
                _ = try connection.call("org.sortedvault.vault.Delete", ["service": .string(name), "account": .string(name)])
            }
            let after = Set((try? FileManager.default.contentsOfDirectory(atPath: cli.dataDir)) ?? [])
            #expect(after.subtracting(before).filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }.isEmpty)
            try secondClientIsServed(cli, after: "odd names")
        }

        @Test func tenThousandPipelinedRequestsWhoseRepliesAreNeverRead() throws {
            let cli = try Self.shared
            let attacker = try RawSocket(path: cli.socket)
            var timeout = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(attacker.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let request = frame(#"{"method":"org.sortedvault.vault.Status"}"#)
            var burst: [UInt8] = []
            for _ in 0..<10_000 { burst += request }
            let sent = attacker.send(burst)
            #expect(sent > 0)
            try secondClientIsServed(cli, after: "10,000 unread pipelined requests (\(sent) bytes accepted)")
        }

        @Test func twoThousandConnectionsFromOneUID() throws {
            let cli = try Self.shared
            TestDescriptorLimit.atLeast(8192)  // raised, never lowered
            var sockets: [RawSocket] = []
            for _ in 0..<2_000 {
                guard let socket = try? RawSocket(path: cli.socket) else { break }
                sockets.append(socket)
            }
            #expect(sockets.count > 100)
            sockets.removeAll()
            try secondClientIsServed(cli, after: "2,000 connections")
        }
    }
}

/// The name of the varlink error `body` threw, or nil.
func errorName(_ body: () throws -> Void) -> String? {
    do {
        try body()
        return nil
    } catch let error as VarlinkError {
        return error.name
    } catch {
        return "\(error)"
    }
}
