import Foundation
import Testing
import VaultCore
import VaultCrypto
@testable import VaultSession

/// The manager's book of logins as a value: what wakes the driver, and who is held back how long.
@Suite(.timeLimit(.minutes(20))) struct LoginBookTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let key = try! ItemKey(service: "com.sorted.api", account: "ada")

    func session(expiresIn: TimeInterval = 3600, refresh: Bool = true, lifetime: TimeInterval? = 86400) throws -> LoginSession {
        LoginSession(signIn: TokenResponse(accessToken: secure("A1"), expiresIn: expiresIn, refreshToken: refresh ? secure("R1") : nil),
                     provider: try testProvider(), at: now, maximumLifetime: lifetime)
    }

    @Test func theSameTokensReadAgainWakeNothing() throws {
        var book = LoginBook()
        let login = try session()
        let changed1 = book.track(login, for: key)
        #expect(changed1)
        let changed2 = book.track(login, for: key)
        #expect(!changed2)
        #expect(book.tracked[key]?.endReason == .lifetimeOver)
        // A login whose end does not move (a refresh inside its lifetime) changes the entry, not the schedule.
        let changed3 = book.track(try session(expiresIn: 1800), for: key)
        #expect(!changed3)
        #expect(book.tracked[key]?.accessTokenExpiry == now.addingTimeInterval(1800))
        let changed4 = book.track(try session(lifetime: 3 * 86400), for: key)
        #expect(changed4)
    }

    @Test func aLaterDueTimeWakesNothingAndAnEarlierOneDoes() {
        var book = LoginBook()
        let changed5 = book.noteRefreshDue(now.addingTimeInterval(600), for: key, proactive: true)
        #expect(changed5)
        let changed6 = book.noteRefreshDue(now.addingTimeInterval(900), for: key, proactive: true)
        #expect(!changed6)
        let changed7 = book.noteRefreshDue(now.addingTimeInterval(300), for: key, proactive: true)
        #expect(changed7)
        let changed8 = book.noteRefreshDue(now.addingTimeInterval(100), for: key, proactive: false)
        #expect(!changed8)
        let changed9 = book.noteRefreshDue(nil, for: key, proactive: true)
        #expect(!changed9)
    }

    @Test func theNextWakeUpIsTheEarliestOfEverythingDue() throws {
        var book = LoginBook()
        _ = book.track(try session(lifetime: 7200), for: key)
        _ = book.noteRefreshDue(now.addingTimeInterval(3000), for: key, proactive: true)
        #expect(book.nextWakeUp(at: now, proactive: true, dueShared: false, also: [nil]) == now.addingTimeInterval(3000))
        // Without proactive refresh only the login's end and the other dates count.
        #expect(book.nextWakeUp(at: now, proactive: false, dueShared: false, also: [nil]) == now.addingTimeInterval(7200))
        #expect(book.nextWakeUp(at: now, proactive: true, dueShared: false, also: [now.addingTimeInterval(5)]) == now.addingTimeInterval(5))
        // A store other managers write is looked at again within the shared poll.
        #expect(book.nextWakeUp(at: now, proactive: true, dueShared: true, also: []) == now.addingTimeInterval(LoginBook.sharedDuePoll))
        book.forget(key)
        #expect(book.nextWakeUp(at: now, proactive: true, dueShared: false, also: []) == nil)
        #expect(book.ended(at: now.addingTimeInterval(7200)).isEmpty)
    }

    @Test func aClientIsHeldBackOnlyByTheFloorAndTheBackgroundByTheWholeDelay() {
        var book = LoginBook()
        let retry = RetryPolicy(base: 30, cap: 3600)
        let held = book.failed(key, at: now, retry: retry, random: 0.5)
        #expect(held.failures == 1 && held.notBefore > now.addingTimeInterval(1))
        #expect(book.heldBackUntil(key, asker: .background, clientRetryFloor: 1) == held.notBefore)
        #expect(book.heldBackUntil(key, asker: .client, clientRetryFloor: 1) == now.addingTimeInterval(1))
        #expect(book.heldBackUntil(key, asker: .forced, clientRetryFloor: 1) == nil)
        #expect(book.heldBackUntil(key, asker: .due, clientRetryFloor: 1) == nil)
        let again = book.failed(key, at: now, retry: retry, random: 0.5)
        #expect(again.failures == 2)
        book.succeeded(key)
        #expect(book.heldBackUntil(key, asker: .background, clientRetryFloor: 1) == nil)
    }

    @Test func aLoginLivingLessThanTheLeadIsDueHalfwayAndNeverWithin30Seconds() throws {
        let configuration = SessionConfiguration(minValid: 60, refreshAhead: 60, refreshJitter: 0)
        #expect(LoginBook.refreshDue(try session(expiresIn: 3600), configuration: configuration, random: 0) == now.addingTimeInterval(3480))
        #expect(LoginBook.refreshDue(try session(expiresIn: 120), configuration: configuration, random: 0) == now.addingTimeInterval(60))
        #expect(LoginBook.refreshDue(try session(expiresIn: 0), configuration: configuration, random: 0) == now.addingTimeInterval(30))
        #expect(LoginBook.refreshDue(try session(refresh: false), configuration: configuration, random: 0) == nil)
    }
}
