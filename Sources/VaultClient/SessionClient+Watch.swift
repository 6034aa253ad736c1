import NIOCore
import Varlink
import VaultAPI
import VaultCore
import VaultSession

extension SessionClient {
    /// What happens to the logins this client may watch (of one service or one login when given),
    /// from now on: it returns once the daemon has confirmed the subscription ("watching"), so
    /// nothing after that is missed.
    ///
    /// ```swift
    /// for try await event in try await sessions.watch(service: "com.sorted.api", account: "ada") {
    ///     if event.kind == .loggedOut { showSignIn() }
    /// }
    /// ```
    ///
    /// The replies are read on NIO's event loop: a watcher holds no thread while it waits. The
    /// stream ends when the caller stops iterating (the connection is then closed) and throws
    /// `.unavailable` when the daemon goes away; watch again once it is back.
    public func watch(service: String? = nil, account: String? = nil) async throws -> AsyncThrowingStream<SessionEvent, any Error> {
        let channel = try await client.openStream(SessionInterface.Watch.self, .init(service: service, account: account))
        let path = client.socketPath
        let (events, continuation) = AsyncThrowingStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(256))
        try await withCheckedThrowingContinuation { (subscribed: CheckedContinuation<Void, any Error>) in
            let reader = Task {
                var waiting: CheckedContinuation<Void, any Error>? = subscribed
                var failure: (any Error)?
                do {
                    try await channel.executeThenClose { inbound, _ in
                        for try await frame in inbound {
                            switch try Self.decode(try frame.get()) {
                            case .error(let name, let parameters):
                                throw SessionWireError.decode(name, parameters)
                            case .reply(let reply, let continues):
                                if let event = try SessionEvent(wire: reply.event) {
                                    continuation.yield(event)
                                } else {
                                    waiting?.resume()
                                    waiting = nil
                                }
                                if !continues { return }
                            }
                        }
                    }
                    if !Task.isCancelled {
                        failure = VaultError(.unavailable, "the daemon at \(path) ended the watch: it stopped or restarted; watch again once it answers")
                    }
                } catch {
                    failure = Task.isCancelled ? nil : Self.vaultError(error, socketPath: path)
                }
                if let waiting {
                    waiting.resume(throwing: failure ?? CancellationError())
                }
                continuation.finish(throwing: failure)
            }
            continuation.onTermination = { _ in reader.cancel() }
        }
        return events
    }

    private static func decode(_ frame: ByteBuffer) throws -> VarlinkWire.Reply<SessionInterface.Watch.Reply> {
        try frame.withUnsafeReadableBytes { try VarlinkWire.decodeReply(SessionInterface.Watch.self, frame: $0) }
    }

    private static func vaultError(_ error: any Error, socketPath: String) -> VaultError {
        switch error {
        case let error as VaultError: return error
        case let error as WireReplyError: return VaultError.storageFailure("the daemon at \(socketPath) sent a \(error.description)")
        case let error as VarlinkError: return VaultError.storageFailure("the daemon at \(socketPath) broke the protocol: \(error)")
        default: return VaultError(.unavailable, "the watch of the daemon at \(socketPath) failed (\(error)); watch again once it answers")
        }
    }
}
