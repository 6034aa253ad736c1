import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

extension SessionManager {
    /// "Am I still logged in?": the stored access token if the login stays valid for `minValid`
    /// (``LoginSession/isValid(at:forAtLeast:)``), else a refresh (shared with every concurrent
    /// caller), else why not.
    public func autoLogin(_ key: ItemKey) async throws -> AutoLoginResult {
        if let answer = autoLoginNow(key) { return answer }
        do {
            return try await sharedFlight(key, asker: .client, validFor: configuration.minValid)
        } catch let error as VaultError where error.code == .unavailable {
            // The store did not answer (a fleet's database down or unreachable): as with a provider
            // out of reach, nothing was changed or lost, and asking again later may succeed.
            return .offline(nil, reason: error.reason)
        }
    }

    /// The stored token of ``autoLogin(_:)``, answered on the caller's thread from the store's
    /// immediate read (``TokenStoreReadingNow``), with no task and no lock; ``autoLogin(_:)`` runs it first.
    ///
    /// Returns nil whenever ``autoLogin(_:)`` could do anything but return the stored token as it
    /// is: a refreshed token waiting to be written, a login missing, ended or due for refresh, a store
    /// without an immediate read, or any error (the refresh flight reads again under the login's
    /// lock and reports it). It never writes and never refreshes, so it cannot break refresh's single flight.
    public func autoLoginNow(_ key: ItemKey) -> AutoLoginResult? {
        guard !records.hasUncommitted.load(ordering: .acquiring), let reads = readsNow,
              let itemKey = try? SessionItems.item(for: key) else { return nil }
        return validAsStored(try? reads.retrieveNow(itemKey))
    }

    /// The stored token of ``autoLogin(_:)`` from one read of a store that has no immediate reads
    /// (a fleet's database: one SELECT, under the store's own deadline): no refresh
    /// flight, no change hints, no key lock. Nil whenever ``autoLogin(_:)`` could do anything but
    /// return the stored token as it is (as ``autoLoginNow(_:)``), including any error: the refresh
    /// flight reads again under the login's lock and reports it. A store with immediate reads has
    /// answered in ``autoLoginNow(_:)`` already: nil, without a read.
    public func autoLoginRead(_ key: ItemKey) async -> AutoLoginResult? {
        guard readsNow == nil, !records.hasUncommitted.load(ordering: .acquiring),
              let itemKey = try? SessionItems.item(for: key) else { return nil }
        return validAsStored(try? await store.retrieve(itemKey))
    }

    /// The stored login's token when nothing waits to be written and it stays valid for ``SessionConfiguration/minValid``.
    private func validAsStored(_ item: RetrievedItem?) -> AutoLoginResult? {
        guard let item, !records.hasUncommitted.load(ordering: .acquiring), let session = try? LoginSession(sealedRecord: item.secret),
              session.isValid(at: clock.now, forAtLeast: configuration.minValid) else { return nil }
        return .valid(AccessGrant(session))
    }
}
