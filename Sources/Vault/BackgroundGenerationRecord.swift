import NIOPosix
import Synchronization
import VaultCore
import VaultCrypto

/// A ``GenerationRecord`` written after the change it records is acknowledged, on the blocking-work
/// pool, so that a store waits for its own commit only and never for the record's two fsyncs
/// (temporary file and directory), and the thread that called ``write(vaultID:generation:)`` — in
/// the daemon, often the event loop — never blocks on the disk.
///
/// ```swift
/// let record = BackgroundGenerationRecord(GenerationFile(path: paths.generationRecord), threadPool: pool)
/// let vault = try await EncryptedVault(storage: storage, threadPool: pool, generationRecord: record)
/// // …serve…
/// await record.flush()  // at shutdown, before the pool stops: the newest generation is on disk
/// ```
///
/// Writes that arrive while one is in progress are coalesced: only the newest generation is written
/// next, so a burst of stores costs one record write after the one in progress, not one each.
/// The record was already best effort and written after the commit (docs/rollback.md, "What is not
/// detected"): it may lag the file by the writes still queued, never lead it. ``read()`` answers the
/// newest generation handed over while its write is still to finish, so a reader never sees an
/// older generation than one already handed over, and never waits for the disk.
///
/// Writes go to the file in the order they were handed over: one drain at a time, by turns of a
/// ``KeyedLock`` (a pool has several threads, and two drains side by side could let an older
/// generation's rename land after a newer one's).
public final class BackgroundGenerationRecord: GenerationRecord {
    private struct Pending {
        var newest: (vaultID: [UInt8], generation: UInt64)?
        /// The newest generation handed over whose write has not finished (or failed) yet.
        var unwritten: (vaultID: [UInt8], generation: UInt64)?
        var draining = false
    }

    private let record: any GenerationRecord
    private let threadPool: NIOThreadPool
    private let pending = Locked(Pending())
    private let turns = KeyedLock<Turn>()
    private enum Turn: Hashable { case drain }

    public init(_ record: any GenerationRecord, threadPool: NIOThreadPool) {
        self.record = record
        self.threadPool = threadPool
    }

    public func read() throws -> (vaultID: [UInt8], generation: UInt64)? {
        if let unwritten = pending.withLock({ $0.unwritten }) { return unwritten }
        return try record.read()
    }

    /// Hands the generation over and returns at once; the write follows on the pool.
    /// A generation not newer than the one already waiting (for the same vault) changes nothing.
    public func write(vaultID: [UInt8], generation: UInt64) {
        let startDraining = pending.withLock { state -> Bool in
            if let newest = state.newest, newest.vaultID == vaultID, newest.generation >= generation { return false }
            state.newest = (vaultID, generation)
            state.unwritten = (vaultID, generation)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startDraining { Task { await self.drainInTurn() } }
    }

    /// Waits until every generation handed over so far has been written (or has failed to be).
    /// Call it before the pool shuts down: after that, what is still queued is not written.
    public func flush() async {
        await drainInTurn()
    }

    /// Writes whatever is waiting, after the drain in progress, if any, has finished.
    private func drainInTurn() async {
        try? await turns.withLock(.drain) {
            try await threadPool.runIfActive { self.drain() }
        }
    }

    private func drain() {
        while let next = pending.withLock({ state -> (vaultID: [UInt8], generation: UInt64)? in
            guard let newest = state.newest else {
                state.draining = false
                return nil
            }
            state.newest = nil
            return newest
        }) {
            // Best effort, as the synchronous write was: a failure leaves the record behind the file.
            try? record.write(vaultID: next.vaultID, generation: next.generation)
            pending.withLock { state in
                if let unwritten = state.unwritten, unwritten.vaultID == next.vaultID, unwritten.generation == next.generation {
                    state.unwritten = nil
                }
            }
        }
    }
}
