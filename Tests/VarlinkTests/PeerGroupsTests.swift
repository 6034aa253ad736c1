import Foundation
import Testing
@testable import Varlink

#if canImport(Glibc)
import Glibc
#endif

/// The supplementary groups read at every accept (`/proc/PID/status`, `Groups:`): the same groups
/// the kernel reports for this process, and nil for a line that is missing or not numbers.
@Suite(.timeLimit(.minutes(20))) struct PeerGroupsTests {
    @Test func theGroupsOfThisProcessAreTheKernelsGroups() throws {
        let count = getgroups(0, nil)
        var expected = [gid_t](repeating: 0, count: Int(count))
        #expect(getgroups(count, &expected) == count)
        let groups: [UInt32] = try #require(PeerCredentials.supplementaryGroups(ofProcess: getpid()))
        let kernels: [UInt32] = expected.map { UInt32($0) }
        #expect(groups.sorted() == kernels.sorted())
    }

    @Test func theGroupsLineIsReadWhereverItIs() {
        func groups(_ text: String) -> [UInt32]? { PeerCredentials.groups(inStatus: Array(text.utf8)) }
        #expect(groups("Name:\tx\nUid:\t1000\t1000\t1000\t1000\nGroups:\t4 24 27 1000 \nNgid:\t0\n") == [4, 24, 27, 1000])
        #expect(groups("Name:\tx\nGroups:\t\nPid:\t1\n") == [])
        #expect(groups("Name:\tx\nGroups:\t4294967295") == [4_294_967_295])
        #expect(groups("Groups:\t7\n") == [7])
        // Only a line that starts with the label counts; anything but numbers refuses the line.
        #expect(groups("Name:\tGroups:\t9\n") == nil)
        #expect(groups("Name:\tx\nGroups:\t4 x 27\n") == nil)
        #expect(groups("Name:\tx\nGroups:\t4294967296\n") == nil)
        #expect(groups("Name:\tx\nGroups:\t-1\n") == nil)
        #expect(groups("Name:\tx\nPid:\t1\n") == nil)
        #expect(groups("") == nil)
    }
}

/// The groups are read at accept only when the server's configuration asks for them (the daemon:
/// while a policy rule names groups), so a connection costs no `/proc` read otherwise.
@Suite(.timeLimit(.minutes(20))) struct PeerGroupsAtAcceptTests {
    static func groupsSeenByTheServer(reading: Bool) async throws -> JSONValue? {
        let server = try await LiveServer { $0.readsGroups = { reading } }
        let path = server.socketPath
        let reply = try await io {
            let connection = try VarlinkConnection(unixSocketPath: path, timeout: .seconds(60))
            defer { connection.close() }
            return try connection.call("org.example.test.WhoAmI")
        }
        try await server.stop()
        return reply["groups"]
    }

    @Test func theGroupsAreReadOnlyWhenTheServerAsksForThem() async throws {
        let count = getgroups(0, nil)
        var expected = [gid_t](repeating: 0, count: Int(count))
        #expect(getgroups(count, &expected) == count)
        let read = try await Self.groupsSeenByTheServer(reading: true)
        guard case .array(let values)? = read else {
            Issue.record("the groups were not read: \(String(describing: read))")
            return
        }
        #expect(Set(values) == Set(expected.map { JSONValue.int(Int64($0)) }))
        let skipped = try await Self.groupsSeenByTheServer(reading: false)
        #expect(skipped == nil || skipped == .null, "read without being asked: \(String(describing: skipped))")
    }
}
