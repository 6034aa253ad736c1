import Foundation
import Synchronization
import TestSupport
import Testing
import Varlink
import VaultPolicy

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// One app that holds many connections and keeps opening more does not lock out the user's other apps.
    @Suite struct ConnectionFairnessTests {
        @Test func aWellBehavedClientIsServedWhileAnotherFloodsTheDaemon() throws {
            let cli = try CLIHarness()
            try cli.initKeyFileVault()
            try cli.startDaemon()
            TestDescriptorLimit.atLeast(8192)  // raised, never lowered

            // The flooder (this test process) holds every connection the daemon lets it have…
            var held: [VarlinkConnection] = []
            for _ in 0..<100 {
                guard let connection = try? VarlinkConnection(unixSocketPath: cli.socket, timeout: .seconds(5)),
                      (try? connection.call("org.sortedvault.vault.Status")) != nil else { continue }
                held.append(connection)
            }
            // Exactly its share: every connection up to the per-process limit is served, none beyond.
            let share = DaemonSettings.builtInDefault.maxConnectionsPerProcess
            #expect(held.count == share, "one process holds \(held.count) connections; its limit is \(share)")

            // …and keeps making thousands of attempts while the well-behaved client works.
            let socket = cli.socket
            let stop = Atomic<Bool>(false)
            let attempts = Atomic<Int>(0)
            let flood = Thread {
                while !stop.load(ordering: .relaxed), attempts.load(ordering: .relaxed) < 20_000 {
                    var burst: [RawSocket] = []
                    for _ in 0..<50 { if let socket = try? RawSocket(path: socket) { burst.append(socket) } }
                    attempts.add(burst.count, ordering: .relaxed)
                }
            }
            flood.start()
            defer { stop.store(true, ordering: .relaxed) }
            while attempts.load(ordering: .relaxed) < 500 { usleep(1_000) }

            // The well-behaved client: the CLI, another executable in processes of its own.
            for round in 0..<10 {
                let status = try cli.run(["status", "--no-autostart"])
                #expect(status.status == 0, "round \(round), after \(attempts.load(ordering: .relaxed)) flood attempts: \(status.stderr)")
            }
            stop.store(true, ordering: .relaxed)
            while !flood.isFinished { usleep(1_000) }
            #expect(attempts.load(ordering: .relaxed) >= 1_000, "the flood made only \(attempts.load(ordering: .relaxed)) attempts")
            held.forEach { $0.close() }
        }
    }
}
