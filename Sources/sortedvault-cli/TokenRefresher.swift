import FoundationEssentials
import CLICore

#if canImport(Glibc)
import Glibc
#endif
import CLIOptions
import VaultClient
import VaultCore
import VaultSession

/// Keeps `sortedvault exec`'s token file current: watches the login (`org.sortedvault.session.Watch`)
/// and, at each `refreshed` or `saved` event, asks AutoLogin for the token and rewrites the file
/// atomically. The daemon's proactive refresh is what renews the login while the command runs;
/// this only follows it.
struct TokenRefresher: Sendable {
    let sessions: SessionClient
    let key: ItemKey
    let file: TokenFile

    /// Starts watching and returns once the daemon has confirmed the watch; cancel the task it
    /// returns to stop.
    func start() async throws -> Task<Void, Never> {
        let events: AsyncThrowingStream<SessionEvent, any Error>
        do {
            events = try await sessions.watch(service: key.service, account: key.account)
        } catch {
            throw VaultError(.unavailable, "the daemon did not confirm the watch of \(key): \(error)")
        }
        let refresher = self
        return Task {
            do {
                for try await event in events {
                    switch event.kind {
                    case .refreshed, .saved: await refresher.rewrite()
                    case .expired, .reauthRequired, .loggedOut:
                        refresher.warn("the login \(refresher.key) ended (\(event.kind.rawValue)); the token file keeps the last token")
                    }
                }
            } catch {
                refresher.warn("stopped following refreshes of \(refresher.key): \(error)")
            }
        }
    }

    private func rewrite() async {
        do {
            if let grant = try await sessions.autoLogin(key).grant {
                try file.write(grant.accessToken)
            }
        } catch {
            warn("could not fetch the refreshed token of \(key): \(error)")
        }
    }

    private func warn(_ message: String) {
        StandardStreams.reportError(message, program: "sortedvault exec")
    }
}
