import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore

extension SessionManager {
    /// The stored logins — of one service when `service` is given — without their secrets, sorted
    /// by service then account (by bytes, as names compare everywhere).
    ///
    /// The caller decides who may see which: the daemon keeps only the services its policy allows
    /// for `session.list`. A login whose record fails its integrity check is left out — the store
    /// reports it (a fleet store logs its row and counts it) — so one damaged or tampered record
    /// cannot hide every other login from every caller; any other failure fails the call.
    public func list(service: String? = nil) async throws -> [SessionListEntry] {
        if let service { try ItemKey.checkName(service, what: "service") }
        let items = try await store.list(service: service.map { SessionItems.sessionPrefix + $0 })
        var entries: [SessionListEntry] = []
        for item in items {
            guard let key = SessionItems.login(of: item.key) else { continue }
            let stored: LoginSession?
            do { stored = try await logins.read(key) } catch let error as VaultError where error.code == .integrityFailure { continue }
            guard let session = stored else { continue }
            let status = SessionStatus(session, now: clock.now, minValid: configuration.minValid, retryNotBefore: records.retryNotBefore(key))
            entries.append(SessionListEntry(service: key.service, account: key.account, status: status))
        }
        return entries.sorted {
            $0.service.utf8.lexicographicallyPrecedes($1.service.utf8)
                || ($0.service.utf8.elementsEqual($1.service.utf8) && $0.account.utf8.lexicographicallyPrecedes($1.account.utf8))
        }
    }
}
