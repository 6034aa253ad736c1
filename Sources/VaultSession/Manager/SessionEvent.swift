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
/// on. A hub of its own, behind its own lock, so a subscriber that goes away leaves at once (no
/// task to reach the manager) and publishing waits for nothing else.
final class SessionEventHub: Sendable {
    private struct Subscriber {
        /// Which events the subscriber asked for; the others are never yielded to it.
        let matches: @Sendable (SessionEvent) -> Bool
        let yield: @Sendable (SessionEvent) -> Void
    }

    private struct Subscribers {
        var all: [UInt64: Subscriber] = [:]
        var nextID: UInt64 = 0
    }
    private let subscribers = Locked(Subscribers())

    /// A stream of the events published from now on (the newest 256 kept for a slow reader); it
    /// ends when the caller stops iterating.
    func subscribe() -> AsyncStream<SessionEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(256))
        let id = add(Subscriber(matches: { _ in true }, yield: { continuation.yield($0) }))
        continuation.onTermination = { [self] _ in remove(id) }
        return stream
    }

    /// The events of `service` and `account` (each byte for byte; every one when nil) published
    /// from now on, filtered as they are published: no task stands between the hub and the stream.
    func subscribe(service: String?, account: String?) -> AsyncThrowingStream<SessionEvent, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SessionEvent.self, bufferingPolicy: .bufferingNewest(256))
        let matches = { @Sendable (event: SessionEvent) -> Bool in
            (service.map { event.key.service.utf8.elementsEqual($0.utf8) } ?? true)
                && (account.map { event.key.account.utf8.elementsEqual($0.utf8) } ?? true)
        }
        let id = add(Subscriber(matches: matches, yield: { continuation.yield($0) }))
        continuation.onTermination = { [self] _ in remove(id) }
        return stream
    }

    func publish(_ event: SessionEvent) {
        for subscriber in subscribers.withLock({ Array($0.all.values) }) where subscriber.matches(event) {
            subscriber.yield(event)
        }
    }

    private func add(_ subscriber: Subscriber) -> UInt64 {
        subscribers.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.all[id] = subscriber
            return id
        }
    }

    private func remove(_ id: UInt64) {
        _ = subscribers.withLock { $0.all.removeValue(forKey: id) }
    }
}
