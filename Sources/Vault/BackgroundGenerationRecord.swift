import VaultCrypto
import Dispatch
import Synchronization

/// A ``GenerationRecord`` written after the change it records is acknowledged, on a serial queue of
/// its own, so that a store waits for its own commit only and never for the record's two fsyncs
/// (temporary file and directory), and the thread that called ``write(vaultID:generation:)`` — in
/// the daemon, often the event loop — never blocks on the disk.
///
/// ```swift
/// let record = BackgroundGenerationRecord(GenerationFile(path: paths.generationRecord))
/// let vault = try await EncryptedVault(storage: storage, generationRecord: record)
/// // …serve…
/// record.flush()  // at shutdown: the newest generation is on disk
/// ```
///
/// Writes that arrive while one is in progress are coalesced: only the newest generation is written
/// next, so a burst of stores costs one record write after the one in progress, not one each.
/// The record was already best effort and written after the commit (docs/rollback.md, "What is not
/// detected"): it may lag the file by the writes still queued, never lead it. ``read()`` first waits
/// for the queued writes, so a reader never sees an older generation than one already handed over.
public final class BackgroundGenerationRecord: GenerationRecord {
    private struct Pending {
        var newest: (vaultID: [UInt8], generation: UInt64)?
        var draining = false
    }

    private let record: any GenerationRecord
    private let queue = DispatchQueue(label: "sortedvault.generation-record")
    private let pending = Locked(Pending())

    public init(_ record: any GenerationRecord) {
        self.record = record
    }

    public func read() throws -> (vaultID: [UInt8], generation: UInt64)? {
        flush()
        return try record.read()
    }

    /// Hands the generation over and returns at once; the write follows on the record's queue.
    /// A generation not newer than the one already waiting (for the same vault) changes nothing.
    public func write(vaultID: [UInt8], generation: UInt64) {
        let startDraining = pending.withLock { state -> Bool in
            if let newest = state.newest, newest.vaultID == vaultID, newest.generation >= generation { return false }
            state.newest = (vaultID, generation)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if startDraining { queue.async { self.drain() } }
    }

    /// Waits until every generation handed over so far has been written (or has failed to be).
    public func flush() {
        queue.sync {}
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
        }
    }
}
