import Dispatch
import Foundation
import CLIOptions
import VaultClient
import VaultCore

/// Keeps `sortedvault exec`'s token file current: watches the login (`org.sortedvault.session.Watch`)
/// on a thread of its own and, at each `refreshed` or `saved` event, asks AutoLogin for the token
/// and rewrites the file atomically. The daemon's proactive refresh is what renews the login while
/// the command runs; this only follows it.
struct TokenRefresher: Sendable {
    let sessions: SessionClient
    let key: ItemKey
    let file: TokenFile

    /// Starts watching and returns once the daemon has confirmed the watch (at most 10 s).
    func start() throws {
        let watching = DispatchSemaphore(value: 0)
        let refresher = self
        let thread = Thread {
            do {
                try refresher.sessions.watchBlocking(service: refresher.key.service, account: refresher.key.account) { event in
                    switch event.kind {
                    case "watching": watching.signal()
                    case "refreshed", "saved": refresher.rewrite()
                    case "expired", "reauthRequired", "loggedOut":
                        refresher.warn("the login \(refresher.key) ended (\(event.kind)); the token file keeps the last token")
                    default: break
                    }
                    return true
                }
            } catch {
                refresher.warn("stopped following refreshes of \(refresher.key): \(error)")
                watching.signal()
            }
        }
        thread.start()
        guard watching.wait(timeout: .now() + 10) == .success else {
            throw VaultError(.unavailable, "the daemon did not confirm the watch of \(key) in 10 s; check its log")
        }
    }

    private func rewrite() {
        let done = DispatchSemaphore(value: 0)
        let refresher = self
        Task {
            defer { done.signal() }
            do {
                if let grant = try await refresher.sessions.autoLogin(refresher.key).grant {
                    try refresher.file.write(grant.accessToken)
                }
            } catch {
                refresher.warn("could not fetch the refreshed token of \(refresher.key): \(error)")
            }
        }
        done.wait()
    }

    private func warn(_ message: String) {
        FileHandle.standardError.write(Data("sortedvault exec: \(message)\n".utf8))
    }
}
