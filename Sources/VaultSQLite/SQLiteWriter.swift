import Dispatch

/// The one read-write connection of ``SQLiteSealedStorage``, on a serial queue of its own: every
/// write (which fsyncs) runs there, off the caller's thread, one at a time.
///
/// ```swift
/// let writer = try SQLiteWriter(path: path, cacheKiB: 512)
/// try await writer.write { connection in
///     try connection.inTransaction { try connection.run(.deleteItem, .blob(lookup)) }
/// }
/// ```
final class SQLiteWriter: Sendable {
    private let queue = DispatchQueue(label: "org.sortedvault.sqlite-writer")
    /// Touched only on `queue`.
    private let connection: SQLiteConnection<SQLiteWriteStatement>

    init(path: String, cacheKiB: Int) throws {
        connection = try SQLiteConnection(path: path, readOnly: false, cacheKiB: cacheKiB)
    }

    /// Runs `body` on the writer's queue and resumes the caller with its result.
    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection<SQLiteWriteStatement>) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body(self.connection) }) }
        }
    }

    /// Runs `body` on the writer's queue, blocking the caller: for opening and closing.
    func writeNow<T>(_ body: (SQLiteConnection<SQLiteWriteStatement>) throws -> T) rethrows -> T {
        try queue.sync { try body(connection) }
    }
}
