import NIOCore
import Synchronization

/// What a handler knows about the call beyond its parameters, and how it streams replies.
///
/// ```swift
/// case "Watch":
///     guard call.more else { throw VarlinkError.expectedMore }
///     for change in changes {
///         if context.isConnectionClosed { break }
///         try await context.reply(["change": change])
///     }
///     return ["done": true]
/// ```
public struct VarlinkCallContext: Sendable {
    /// The connecting process, from the kernel. Never from the client's message.
    public let peer: PeerCredentials
    let sink: ReplySink
    let more: Bool
    let oneway: Bool

    init(peer: PeerCredentials, sink: ReplySink, more: Bool, oneway: Bool) {
        self.peer = peer
        self.sink = sink
        self.more = more
        self.oneway = oneway
    }

    /// Sends a `continues: true` reply ahead of the final one, waiting until it is written.
    ///
    /// Throws ``VarlinkError/expectedMore`` when the call was not made with `more: true` (the
    /// client would not expect it), and `CancellationError` once the connection is closed. For a
    /// `oneway` call it does nothing.
    public func reply(_ parameters: [String: JSONValue]) async throws {
        try await reply(.parameters(parameters))
    }

    /// Sends a `continues: true` reply given as a ``VarlinkReply`` (e.g. encoded, with secrets).
    public func reply(_ reply: VarlinkReply) async throws {
        guard more else { throw VarlinkError.expectedMore }
        if oneway { return }
        try await sink.send(reply)
    }

    /// True once the client has gone away; a long-running `more` handler should stop. The
    /// handler's task is also cancelled at that moment.
    public var isConnectionClosed: Bool { sink.isClosed }
}

/// The writing end of one connection, shared by the connection handler and the calls' contexts.
final class ReplySink: Sendable {
    private let channel: any Channel
    private let closed = Atomic<Bool>(false)

    init(channel: any Channel) {
        self.channel = channel
    }

    var isClosed: Bool { closed.load(ordering: .acquiring) }

    func markClosed() { closed.store(true, ordering: .releasing) }

    func send(_ reply: VarlinkReply) async throws {
        guard !isClosed else { throw CancellationError() }
        let (buffer, isSensitive) = reply.frame(allocator: channel.allocator, continues: true)
        defer { if isSensitive { buffer.wipeStorage() } }
        do {
            try await channel.writeAndFlush(buffer).get()
        } catch {
            throw CancellationError()
        }
    }
}
