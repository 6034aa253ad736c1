import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif
import VaultCore
import VaultCrypto

extension LoopbackListener {
    /// Serves the sign-in: each request at the path is handed to `complete` (which asks the vault
    /// to complete the sign-in with its query) and answered by how that went. An answer with another
    /// sign-in's state (`VaultError` `.callbackMismatch`: a stale tab, a forgery) is answered 400
    /// and the wait goes on; any other error is answered 400 and thrown. `.failure` when `wake`
    /// became readable (`.interrupted`) or `deadline` passed (`.timedOut`; nil: never) first.
    ///
    /// ```swift
    /// switch try await listener.serve(until: deadline, wake: interruptPipe, shownIn: "the terminal", {
    ///     try await sessions.completeSignIn(start.flowID, callbackQuery: $0)
    /// }) { … }
    /// ```
    ///
    /// `shownIn` names where the user reads why a sign-in failed ("the terminal", "the app"). The
    /// wait for each request runs on a thread of its own, never on Swift concurrency's shared ones.
    public func serve<T: Sendable>(until deadline: ContinuousClock.Instant?, wake: Int32, shownIn place: String,
                                   _ complete: (SecureBytes) async throws -> T) async throws -> Result<T, ReadableWait.Result> {
        while true {
            let callback: Callback
            switch await nextOffThread(until: deadline, wake: wake) {
            case .failure(let why): return .failure(why)
            case .success(let next): callback = next
            }
            do {
                let value = try await complete(callback.query)
                Self.reply(callback.connection, status: "200 OK", page: "Signed in. You can close this tab and return to \(place).")
                return .success(value)
            } catch let error as VaultError where error.code == .callbackMismatch {
                Self.reply(callback.connection, status: "400 Bad Request", page: "This answer is not for the sign-in under way; it was ignored.")
            } catch {
                Self.reply(callback.connection, status: "400 Bad Request", page: "The sign-in did not complete; \(place) says why.")
                throw error
            }
        }
    }

    private func nextOffThread(until deadline: ContinuousClock.Instant?, wake: Int32) async -> Result<Callback, ReadableWait.Result> {
        await withCheckedContinuation { continuation in
            DetachedThread.start { continuation.resume(returning: self.next(until: deadline, wake: wake)) }
        }
    }
}
