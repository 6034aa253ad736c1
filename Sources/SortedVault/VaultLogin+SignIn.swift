import Foundation
import Synchronization
import VaultLoopback

#if canImport(Glibc)
import Glibc
#endif

extension VaultLogin {
    /// Signs the user in through the vault and stores the login under this service and account: the
    /// vault (the daemon, or the in-process `SessionManager`) makes the state, the PKCE verifier and
    /// the nonce and exchanges the code; the app only carries the browser's answer back.
    ///
    /// ```swift
    /// let provider = ProviderSettings(kind: .oidc, clientID: "sorted-desktop", issuer: URL(string: "https://id.sorted.example")!)
    /// try await login.signIn(provider: provider, scopes: ["read"])   // opens the browser, waits for its answer
    /// ```
    ///
    /// Cancelling the calling `Task` cancels the vault's sign-in (and closes the loopback receiver);
    /// so does `timeout` (seconds, 1 to 3600). Throws `VaultError`: `.providerRejected` (declined,
    /// or a refused code), `.callbackMismatch` (a custom opener's answer with another sign-in's
    /// state), `.unavailable` (no answer in time, or the provider unreachable); `CancellationError`.
    @discardableResult
    public func signIn(provider: ProviderSettings, scopes: [String] = [], timeout: TimeInterval = SignInRequest.defaultLifetime,
                       opener: SignInOpener = .loopback()) async throws -> SessionStatus {
        func request(_ redirect: URL) -> SignInRequest {
            SignInRequest(service: key.service, account: key.account, settings: provider, flow: .browser, redirectURI: redirect,
                          scopes: scopes, lifetime: timeout)
        }
        switch opener.kind {
        case .custom(let redirect, let open):
            let start = try await sessions.beginSignIn(request(redirect))
            return try await cancellingOnError(start) {
                let callback = try await open(start.authorizationURL, redirect)
                try Task.checkCancellation()
                return try await sessions.completeSignIn(start.flowID, callbackQuery: try Self.query(of: callback, at: redirect)).status
            }
        case .loopback(let port, let show):
            let listener = try LoopbackListener(port: port, path: nil)
            defer { listener.close() }
            guard let redirect = URL(string: listener.redirectURI) else { throw VaultError(.daemonFailed, "the receiver's address is not a URL") }
            let start = try await sessions.beginSignIn(request(redirect))
            let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
            return try await cancellingOnError(start) {
                show(start.authorizationURL)
                while true {
                    let callback = try await Self.next(listener, until: deadline, timeout: timeout)
                    do {
                        let result = try await sessions.completeSignIn(start.flowID, callbackQuery: callback.query)
                        LoopbackListener.reply(callback.connection, status: "200 OK", page: "Signed in. You can close this tab.")
                        return result.status
                    } catch let error as VaultError where error.code == .callbackMismatch {
                        // Not this sign-in's answer (a stale tab, a forgery): ignored, the wait goes on.
                        LoopbackListener.reply(callback.connection, status: "400 Bad Request", page: "This answer is not for the sign-in under way; it was ignored.")
                    } catch {
                        LoopbackListener.reply(callback.connection, status: "400 Bad Request", page: "The sign-in did not complete; the app says why.")
                        throw error
                    }
                }
            }
        }
    }

    /// Runs `body`; when it throws (cancelled, timed out, refused), the vault's sign-in is ended too
    /// (a no-op when it ended already), so nothing waits for a callback that will not come.
    private func cancellingOnError(_ start: SignInStart, _ body: () async throws -> SessionStatus) async throws -> SessionStatus {
        do {
            return try await body()
        } catch {
            _ = try? await sessions.cancelSignIn(start.flowID)
            throw error
        }
    }

    /// The query of the URL the provider redirected to, when it is at `redirect` (scheme, host, port, path).
    static func query(of callback: URL, at redirect: URL) throws -> SecureBytes {
        guard let got = URLComponents(url: callback, resolvingAgainstBaseURL: false),
              let want = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
              got.scheme?.lowercased() == want.scheme?.lowercased(), got.host?.lowercased() == want.host?.lowercased(),
              got.port == want.port, got.percentEncodedPath == want.percentEncodedPath else {
            throw VaultError.invalidArgument("the opener returned a URL that is not at the redirect URI; return the URL the provider redirected to")
        }
        return SecureBytes(copying: Array((got.percentEncodedQuery ?? "").utf8))
    }

    /// The receiver's next answer at its path, waited for on a thread of its own (the wait blocks);
    /// cancelling the task wakes it.
    static func next(_ listener: LoopbackListener, until deadline: ContinuousClock.Instant,
                     timeout: TimeInterval) async throws -> LoopbackListener.Callback {
        let wake = try WakePipe()
        defer { wake.close() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<LoopbackListener.Callback, ReadableWait.Result>, Never>) in
                let thread = Thread { continuation.resume(returning: listener.next(until: deadline, wake: wake.readEnd)) }
                thread.start()
            }
        } onCancel: {
            wake.wake()
        }
        switch result {
        case .success(let callback): return callback
        case .failure(.interrupted): throw CancellationError()
        case .failure:
            throw VaultError(.unavailable, "no answer came from the browser within \(Int(timeout)) s; the sign-in was cancelled, nothing was stored: sign in again")
        }
    }
}

/// A pipe whose read end becomes readable once ``wake()`` is called, from any thread, until closed.
final class WakePipe: Sendable {
    let readEnd: Int32
    private let writeEnd: Mutex<Int32>

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw VaultError(.unavailable, "no pipe for the sign-in's wait: \(String(cString: strerror(errno)))")
        }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        readEnd = fds[0]
        writeEnd = Mutex(fds[1])
    }

    func wake() {
        writeEnd.withLock { fd in
            var byte: UInt8 = 1
            if fd >= 0 { _ = write(fd, &byte, 1) }
        }
    }

    /// Closes both ends; call it once the waiting thread has returned.
    func close() {
        writeEnd.withLock { fd in
            if fd >= 0 { Glibc.close(fd) }
            fd = -1
        }
        Glibc.close(readEnd)
    }
}
