import Synchronization
import Testing
import VaultCore

/// One task per key: callers join the running task, other keys run their own, a finished task
/// leaves the table, and a forgotten key starts afresh while the old task runs on.
@Suite(.timeLimit(.minutes(20))) struct SingleFlightTests {
    /// A piece of work that starts, says so, and finishes when told, counting how often it ran.
    final class Gate: Sendable {
        let started: AsyncStream<Void>
        private let startedContinuation: AsyncStream<Void>.Continuation
        private let release: AsyncStream<Void>
        private let releaseContinuation: AsyncStream<Void>.Continuation
        private let runs = Atomic<Int>(0)

        init() {
            (started, startedContinuation) = AsyncStream.makeStream()
            (release, releaseContinuation) = AsyncStream.makeStream()
        }

        var count: Int { runs.load(ordering: .acquiring) }

        func work(_ value: Int) async -> Int {
            runs.add(1, ordering: .acquiringAndReleasing)
            startedContinuation.yield()
            for await _ in release { break }
            return value
        }

        func open() { releaseContinuation.yield() }
        func waitForStart() async { for await _ in started { return } }
    }

    @Test func callersForOneKeyJoinTheRunningTask() async {
        let flights = SingleFlight<String, Int>()
        let gate = Gate()
        let (first, firstJoined) = flights.task(for: "ada") { await gate.work(1) }
        let (second, secondJoined) = flights.task(for: "ada") { await gate.work(2) }
        #expect(!firstJoined && secondJoined)
        await gate.waitForStart()
        gate.open()
        #expect(await first.value == 1)
        #expect(await second.value == 1)
        #expect(gate.count == 1)
    }

    @Test func otherKeysRunTheirOwnAndAFinishedTaskLeavesTheTable() async {
        let flights = SingleFlight<String, Int>()
        let gate = Gate()
        let (ada, _) = flights.task(for: "ada") { await gate.work(1) }
        let (bob, bobJoined) = flights.task(for: "bob") { await gate.work(2) }
        #expect(!bobJoined)
        await gate.waitForStart()
        await gate.waitForStart()
        gate.open()
        gate.open()
        #expect(await ada.value == 1)
        #expect(await bob.value == 2)
        // Both ended: the next caller starts afresh.
        let next = Gate()
        let (again, joined) = flights.task(for: "ada") { await next.work(3) }
        #expect(!joined)
        await next.waitForStart()
        next.open()
        #expect(await again.value == 3)
    }

    @Test func aForgottenKeyStartsAfreshAndTheOldTasksEndLeavesTheNewOne() async {
        let flights = SingleFlight<String, Int>()
        let old = Gate(), new = Gate()
        let (first, _) = flights.task(for: "ada") { await old.work(1) }
        await old.waitForStart()
        flights.forget("ada")
        let (second, joined) = flights.task(for: "ada") { await new.work(2) }
        #expect(!joined)
        await new.waitForStart()
        old.open()
        #expect(await first.value == 1)
        // The old task's end did not take the new one out of the table: a caller joins it.
        let (third, thirdJoined) = flights.task(for: "ada") { await new.work(3) }
        #expect(thirdJoined)
        new.open()
        #expect(await second.value == 2)
        #expect(await third.value == 2)
        #expect(new.count == 1)
    }
}
