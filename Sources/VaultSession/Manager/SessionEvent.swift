import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

/// Something that happened to a login, for subscribers (varlink `Watch`): a client on its sign-in
/// screen learns of a new login, one that shows its account learns that it ended.
public struct SessionEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// A login was saved (signed in).
        case saved
        /// The tokens were refreshed.
        case refreshed
        /// The login reached its absolute lifetime or its refresh token's expiry and was wiped.
        case expired
        /// The provider refused the refresh token; the login was wiped.
        case reauthRequired
        /// The login was logged out and wiped.
        case loggedOut
    }

    public let kind: Kind
    public let key: ItemKey
    public let at: Date

    /// An event as it happened: ``SessionManager`` makes them, `SessionClient` reads them from Watch.
    public init(kind: Kind, key: ItemKey, at: Date) {
        self.kind = kind
        self.key = key
        self.at = at
    }
}

/// Where the events of a ``SessionManager`` go: every subscriber's stream, from its subscription
/// on. A hub of its own, not state of the manager's actor, so a subscriber that goes away leaves
/// at once (no task to reach the actor) and publishing costs no actor hop.
final class SessionEventHub: Sendable {
    private struct Subscribers {
        var streams: [UInt64: AsyncStream<SessionEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
    }
    private let subscribers = Locked(Subscribers())

    /// A stream of the events published from now on (the newest 256 kept for a slow reader); it
    /// ends when the caller stops iterating.
    func subscribe() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(256))
        let id = subscribers.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            return id
        }
        continuation.onTermination = { [subscribers] _ in
            _ = subscribers.withLock { $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ event: SessionEvent) {
        for continuation in subscribers.withLock({ Array($0.streams.values) }) { continuation.yield(event) }
    }
}
