import FoundationEssentials
import VaultCore
import VaultCrypto
import VaultLoopback
import VaultSession

/// One sign-in through the browser, run the same way by ``VaultLogin/signIn(provider:scopes:timeout:opener:)``
/// (its loopback opener) and by `sortedvault session login --flow browser`: begin the vault's
/// sign-in, show its page, serve the loopback listener until the vault completed the sign-in with the
/// browser's answer, and end the vault's sign-in on any other way out.
///
/// ```swift
/// let listener = try LoopbackListener(port: 0, path: nil, localhost: false)
/// defer { listener.close() }
/// switch try await BrowserSignIn.run(request, through: sessions, listener: listener, timeout: .seconds(300),
///                                    clock: ContinuousClock(), shownIn: "the app", show: { open($0.authorizationURL) }) {
/// case .signedIn(let result): …
/// case .timedOut: …
/// }
/// ```
///
/// Cancelling the calling task ends the wait at once and throws `CancellationError`; the CLI turns
/// Ctrl-C into that cancellation. Every way out but a completed sign-in ends the vault's sign-in
/// (a no-op when the vault ended it already), so nothing waits for a callback that will not come; the
/// listener's wait has ended by the time this returns, so the caller may close the listener.
public enum BrowserSignIn {
    public enum Outcome: Sendable {
        case signedIn(SignInResult)
        /// No answer came within the timeout; the vault's sign-in was ended, nothing was stored.
        case timedOut
    }

    /// - Parameters:
    ///   - request: the sign-in, with the listener's redirect URI.
    ///   - timeout: how long the browser may take, counted on `clock` from when the page is shown.
    ///   - shownIn: where the user reads why a sign-in failed ("the terminal", "the app"), for the
    ///     page the browser shows.
    ///   - show: shows the page to sign in on (`start.authorizationURL`): opens a browser, prints it.
    public static func run(_ request: SignInRequest, through sessions: any LoginService, listener: LoopbackListener,
                           timeout: Duration, clock: any Clock<Duration>, shownIn place: String,
                           show: (SignInStart) -> Void) async throws -> Outcome {
        let start = try await sessions.beginSignIn(request)
        // The private page xdg-open was given, if one was made (`SystemBrowser`).
        defer { SystemBrowser.removePages(for: start.authorizationURL) }
        do {
            show(start)
            guard let result = try await waitForTheBrowser(start, sessions: sessions, listener: listener, timeout: timeout,
                                                           clock: clock, shownIn: place) else {
                await sessions.endSignIn(start)
                return .timedOut
            }
            return .signedIn(result)
        } catch {
            await sessions.endSignIn(start)
            throw error
        }
    }

    /// The completed sign-in, or nil when `timeout` passed first; `CancellationError` when the task
    /// was cancelled. The timer and the cancellation wake the listener's wait through one pipe.
    private static func waitForTheBrowser(_ start: SignInStart, sessions: any LoginService, listener: LoopbackListener,
                                          timeout: Duration, clock: any Clock<Duration>, shownIn place: String) async throws -> SignInResult? {
        let wake = try WakePipe()
        defer { wake.close() }
        let timedOut = Locked(false)
        let timer = Task {
            do { try await DeadlineRace.sleep(on: clock, for: timeout) } catch { return }
            timedOut.withLock { $0 = true }
            wake.wake()
        }
        defer { timer.cancel() }
        let outcome = try await withTaskCancellationHandler {
            try await listener.serve(until: nil, wake: wake.readEnd, shownIn: place) {
                try await sessions.completeSignIn(start.flowID, callbackQuery: $0)
            }
        } onCancel: {
            wake.wake()
        }
        switch outcome {
        case .success(let result): return result
        // Only the pipe ends the wait: the timer, or the cancellation (which wins when both came).
        case .failure where timedOut.withLock({ $0 }) && !Task.isCancelled: return nil
        case .failure: throw CancellationError()
        }
    }
}

extension LoginService {
    /// Ends the sign-in `start` (CancelLogin), also from a cancelled task: the call runs in a task of
    /// its own, since the daemon's client refuses to start a call for a cancelled task. A no-op when
    /// the vault ended it already; a failure is ignored (the sign-in then ends at its lifetime).
    public func endSignIn(_ start: SignInStart) async {
        await Task { _ = try? await cancelSignIn(start.flowID) }.value
    }
}
