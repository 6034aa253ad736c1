import Testing
@testable import Varlink

/// The admission rules, decision by decision: who may open one more connection.
@Suite(.timeLimit(.minutes(20))) struct ConnectionLimiterTests {
    static func limiter(perUID: Int = 8, perProcess: Int = 3, perExecutable: Int = 5, reserve: Int? = 2) -> ConnectionLimiter {
        var configuration = VarlinkServerConfiguration()
        configuration.maxConnectionsPerUID = perUID
        configuration.maxConnectionsPerProcess = perProcess
        configuration.maxConnectionsPerExecutable = perExecutable
        configuration.connectionsReservedForNewProcesses = reserve
        return ConnectionLimiter(ConnectionLimiter.Limits(configuration))
    }

    static func peer(pid: Int32, exe: String = "/usr/bin/flood", uid: UInt32 = 1000) -> PeerCredentials {
        PeerCredentials(uid: uid, gid: uid, pid: pid, executable: exe)
    }

    @Test func oneProcessGetsNoMoreThanItsQuota() {
        var limiter = Self.limiter()
        for _ in 0..<3 { #expect(limiter.admit(Self.peer(pid: 10)) == nil) }
        #expect(limiter.admit(Self.peer(pid: 10)) == .process)
        #expect(limiter.admit(Self.peer(pid: 11)) == nil)
    }

    @Test func theProcessesOfOneExecutableShareAQuota() {
        var limiter = Self.limiter()
        for pid: Int32 in [10, 10, 10, 11, 11] { #expect(limiter.admit(Self.peer(pid: pid)) == nil) }
        #expect(limiter.admit(Self.peer(pid: 12)) == .executable)
        #expect(limiter.admit(Self.peer(pid: 12, exe: "/usr/bin/app")) == nil)
    }

    @Test func theLastSlotsOfAUIDAreKeptForProcessesThatHoldNone() {
        var limiter = Self.limiter()
        // Two flooding executables fill the shared part (8 - 2 = 6 slots).
        for pid: Int32 in [10, 10, 10] { #expect(limiter.admit(Self.peer(pid: pid)) == nil) }
        for pid: Int32 in [20, 20, 20] { #expect(limiter.admit(Self.peer(pid: pid, exe: "/usr/bin/other")) == nil) }
        #expect(limiter.admit(Self.peer(pid: 21, exe: "/usr/bin/other")) == nil, "a new process uses the reserve")
        #expect(limiter.admit(Self.peer(pid: 21, exe: "/usr/bin/other")) == .reserve, "but not twice")
        #expect(limiter.admit(Self.peer(pid: 30, exe: "/usr/bin/app")) == nil)
        #expect(limiter.admit(Self.peer(pid: 31, exe: "/usr/bin/app2")) == .uid)
    }

    @Test func releasingFreesEveryCount() {
        var limiter = Self.limiter(perUID: 2, perProcess: 2, perExecutable: 2, reserve: 0)
        #expect(limiter.admit(Self.peer(pid: 10)) == nil)
        #expect(limiter.admit(Self.peer(pid: 10)) == nil)
        #expect(limiter.admit(Self.peer(pid: 10)) != nil)
        limiter.release(Self.peer(pid: 10))
        #expect(limiter.admit(Self.peer(pid: 10)) == nil)
        #expect(limiter.total == 2)
    }

    @Test func theDefaultReserveIsAnEighthOfTheUIDLimitAndAlwaysLeavesOneSharedSlot() {
        var configuration = VarlinkServerConfiguration()
        #expect(ConnectionLimiter.Limits(configuration).reservedForNewProcesses == 8)
        configuration.maxConnectionsPerUID = 1
        configuration.connectionsReservedForNewProcesses = 5
        #expect(ConnectionLimiter.Limits(configuration).reservedForNewProcesses == 0)
    }
}
