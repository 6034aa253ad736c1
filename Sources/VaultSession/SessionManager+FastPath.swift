import Foundation
import VaultCore

extension SessionManager {
    /// ``autoLogin(_:)`` of a login whose access token is valid for at least `minValid`, answered on
    /// the caller's thread from the store's fast path (``TokenStoreReadingNow``), without the actor.
    ///
    /// Returns nil whenever ``autoLogin(_:)`` could do anything but return the stored token as it
    /// is: a refreshed token waiting to be written, a login missing, ended or due for refresh, a store
    /// without a fast path, or any error (the async path reports it). It never writes and never
    /// refreshes, so it cannot break refresh's single flight.
    public nonisolated func autoLoginNow(_ key: ItemKey) -> AutoLoginResult? {
        guard !hasUncommitted.load(ordering: .acquiring), let reads = store as? any TokenStoreReadingNow,
              let itemKey = try? SessionItems.item(for: key), let item = try? reads.retrieveNow(itemKey),
              let session = try? LoginSession(sealedRecord: item.secret)
        else { return nil }
        let now = clock.now
        guard session.endReason(at: now) == nil, session.accessTokenIsValid(at: now, forAtLeast: configuration.minValid) else { return nil }
        return .valid(AccessGrant(session))
    }
}
