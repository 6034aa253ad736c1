import Logging
import PostgresNIO
import VaultCrypto

/// The store's change hints (``PostgresTokenStore/changes(of:)``): PostgreSQL's LISTEN/NOTIFY on one
/// connection of its own beside the pool.
///
/// ```swift
/// Task { await store.listenForChanges(try settings.listenConfiguration()) }   // for the store's life
/// for await _ in await store.changes(of: item)! { reread(item) }
/// ```
///
/// Every write, fenced or plain, every delete and every lease release of a row sends
/// `NOTIFY sortedvault_changes, '<the row's lookup, hex>'` in its own transaction, so a hint is
/// delivered only once the change is visible. A hint is only a hint: the row is the truth, and a
/// waiter re-reads it. Notifications sent while no connection listened are lost, so each time the
/// listening connection (re)connects, every waiter is told to look again.
///
/// A link cut without a word (no FIN, no RST: a partition, a dead host) leaves a listen waiting for
/// as long as the kernel keeps the socket, which on an idle connection is forever. So the listening
/// connection asks the server `SELECT 1` once per call deadline, under that deadline, and is closed
/// and made again when no answer comes.
final class ChangeHints: Sendable {
    static let channel = "sortedvault_changes"

    private struct State {
        var waiters: [String: [UInt64: AsyncStream<Void>.Continuation]] = [:]
        var nextID: UInt64 = 0
        /// While no listener runs, ``subscribe(_:)`` gives nil: waiters then look again by time only.
        var listening = false
        var connections = 0
    }
    private let state = Locked(State())

    /// How many times a listening connection was made (and every waiter told to look again).
    var connections: Int { state.withLock { $0.connections } }

    /// A stream that yields after a change of the row `lookup` may have happened (keeps one pending yield).
    func subscribe(_ lookup: [UInt8]) -> AsyncStream<Void>? {
        let key = Self.hex(lookup)
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> UInt64? in
            guard state.listening else { return nil }
            defer { state.nextID += 1 }
            state.waiters[key, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { state in
                state.waiters[key]?[id] = nil
                if state.waiters[key]?.isEmpty == true { state.waiters[key] = nil }
            }
        }
        return stream
    }

    /// Listens until the calling task is cancelled, reconnecting after a pause on `deadline`'s clock
    /// whenever the connection fails, ends, or misses a probe's deadline.
    func run(_ configuration: PostgresConnection.Configuration, deadline: DatabaseDeadline, logger: Logger) async {
        state.withLock { $0.listening = true }
        defer {
            let all = state.withLock { state in
                state.listening = false
                defer { state.waiters = [:] }
                return state.waiters.values.flatMap(\.values)
            }
            all.forEach { $0.finish() }
        }
        var failures = 0
        while !Task.isCancelled {
            do {
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
                let probe = Task { await Self.probe(connection, deadline: deadline, logger: logger) }
                defer { probe.cancel() }
                do {
                    try await connection.listen(on: Self.channel) { notifications in
                        failures = 0
                        // Whatever changed while no connection listened was not announced.
                        wakeAll()
                        for try await notification in notifications { wake(notification.payload) }
                    }
                } catch {
                    logger.info("the database connection listening for changes ended; it reconnects", metadata: ["error": "\(String(describing: type(of: error)))"])
                }
                try? await connection.close()
            } catch {
                logger.debug("the database connection listening for changes could not be made; it is tried again", metadata: ["error": "\(String(describing: type(of: error)))"])
            }
            if Task.isCancelled { break }
            failures += 1
            // 0.5 s, 1 s, 2 s … at most 10 s between attempts.
            try? await deadline.pause(.milliseconds(min(500 << min(failures - 1, 5), 10_000)))
        }
    }

    /// Asks the server `SELECT 1` every `deadline.limit` until cancelled; closes the connection (which
    /// ends its listen) at the first probe that fails or misses the deadline.
    private static func probe(_ connection: PostgresConnection, deadline: DatabaseDeadline, logger: Logger) async {
        do {
            while true {
                try await deadline.pause(deadline.limit)
                _ = try await deadline.run { try await connection.query("SELECT 1", logger: logger).collect() }
            }
        } catch is CancellationError {
            return
        } catch {
            logger.info("the database connection listening for changes did not answer in time; it reconnects", metadata: ["error": "\(String(describing: type(of: error)))"])
            // Not awaited: closing a TLS connection on a dead link waits for the peer's close_notify.
            _ = connection.close() as EventLoopFuture<Void>
        }
    }

    private func wake(_ key: String) {
        state.withLock { $0.waiters[key].map { Array($0.values) } ?? [] }.forEach { $0.yield() }
    }

    private func wakeAll() {
        state.withLock { state in
            state.connections += 1
            return state.waiters.values.flatMap(\.values)
        }.forEach { $0.yield() }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0f)]] }, as: UTF8.self)
    }
}
