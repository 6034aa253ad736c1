import Foundation
import Testing
import VaultCore
@testable import VaultSession
import VaultTesting

/// How many sign-ins may be under way (issue 34, point 9): per program of a user, so that one
/// program cannot block the user's other sign-ins, and the user can end them.
@Suite(.timeLimit(.minutes(20))) struct SignInCapTests {
    static let owner = SignInTests.owner
    static let app = "/usr/lib/a/app"
    static let cli = "/usr/bin/sortedvault"

    func begin(_ h: SessionHarness, service: String = "com.a.app", program: String?, owner: UInt32 = owner) async throws {
        var request = SignInTests().oidcRequest(account: "ada")
        request.service = service
        _ = try await h.sessions.beginSignIn(request, owner: owner, program: program)
    }

    @Test func aProgramFillingItsOwnCapDoesNotBlockTheUsersOtherPrograms() async throws {
        let h = try await SignInTests().harness()
        for _ in 0..<PendingSignIns.capacityPerProgram { try await begin(h, program: Self.app) }
        let refused = await vaultErrorCode { try await begin(h, program: Self.app) }
        #expect(refused == .unavailable, "the program's own cap is full")
        try await begin(h, service: "com.sorted.api", program: Self.cli)  // the user's CLI still signs in
    }

    @Test func theUsersProgramsTogetherHaveABoundedShare() async throws {
        let h = try await SignInTests().harness()
        var begun = 0
        for index in 0..<(PendingSignIns.capacityPerOwner / PendingSignIns.capacityPerProgram) {
            for _ in 0..<PendingSignIns.capacityPerProgram { try await begin(h, program: "/bin/p\(index)"); begun += 1 }
        }
        #expect(begun == PendingSignIns.capacityPerOwner)
        #expect(await vaultErrorCode { try await begin(h, program: "/bin/another") } == .unavailable, "the user's share is full")
        try await begin(h, program: "/bin/another", owner: Self.owner + 1)  // another user's share is its own
    }

    @Test func theUserCancelsEveryProgramsSignInsOfTheServicesAllowed() async throws {
        let h = try await SignInTests().harness()
        for _ in 0..<PendingSignIns.capacityPerProgram { try await begin(h, program: Self.app) }
        try await begin(h, service: "com.sorted.api", program: Self.cli)
        try await begin(h, program: Self.app, owner: Self.owner + 1)
        // A program allowed only com.a.* ends only those; the user then ends the rest; another user's stay.
        #expect(h.sessions.cancelSignIns(owner: Self.owner) { $0.hasPrefix("com.a.") } == PendingSignIns.capacityPerProgram)
        try await begin(h, program: Self.app)  // room again
        #expect(h.sessions.cancelSignIns(owner: Self.owner) { _ in true } == 2)
        #expect(h.sessions.cancelSignIns(owner: Self.owner) { _ in true } == 0)
        #expect(h.sessions.cancelSignIns(owner: Self.owner + 1) { _ in true } == 1)
    }
}
