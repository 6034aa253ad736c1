import ArgumentParser
import FoundationEssentials
import CLICore
import CLIOptions
import SortedVault
import VaultClient
import VaultCore
import VaultCrypto
import VaultLoopback
import VaultSession

#if canImport(Glibc)
import Glibc
#endif

/// `sortedvault session login SERVICE [ACCOUNT]`: the daemon runs the sign-in (state, PKCE
/// verifier, nonce, code exchange, id-token check, storage); this command only carries the
/// browser's answer back, from a loopback listener (browser) or from the terminal (paste).
struct SessionLogin: ReportingCommand, Sendable {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Sign in through the vault: open the provider's page, store the login (exit 8: the sign-in did not complete).",
        discussion: """
            The daemon makes the state, the PKCE verifier (S256) and, for oidc, the nonce, and keeps \
            them: the code the browser brings back is useless without them. The URL to open is always \
            printed on standard error.

            --flow browser: listens on 127.0.0.1 (and ::1 for a --redirect-uri naming localhost; an \
            ephemeral port and a random path unless --port or --redirect-uri say otherwise) and opens \
            the URL with xdg-open (through a private page in $XDG_RUNTIME_DIR, so that the URL is on no \
            command line; removed when the sign-in ends). --flow paste: prints the URL and reads the address the browser ended \
            on (maybe on another machine) from standard input. \
            --flow device (RFC 8628): prints a code and the page where to enter it (on any device); the \
            daemon polls the provider until the sign-in is approved, denied or expired. --flow auto \
            (default): browser when DISPLAY or WAYLAND_DISPLAY is set and SSH_CONNECTION is not, else \
            device when the provider offers it (--device-authorization-endpoint, or the issuer's \
            discovery document), else paste.

            --flow password (--kind firebase or supabase): ACCOUNT is the e-mail address to sign in \
            with (and where the login is stored); the password is read from --password-fd N or asked \
            for on the terminal without echo, never from the command line or the environment; \
            --create signs up first.

            --kind oauth2: --authorization-endpoint and/or --device-authorization-endpoint, \
            --token-endpoint, --client-id [--revocation-endpoint]
            --kind oidc:   --issuer, --client-id (endpoints from the discovery document)
            """)

    @OptionGroup var global: GlobalOptions
    @Argument(help: "The app's service, e.g. com.sorted.api.") var service: String
    @Argument(help: "The account to store the login under; when omitted, the verified user (oidc: its subject; supabase: its verified e-mail).") var account: String?
    @OptionGroup var providerOptions: ProviderOptions
    @Option(help: "How the sign-in comes back.") var flow: LoginFlow = .auto
    @Option(name: .customLong("scope"), help: "A scope to ask for (repeat for several); oidc adds openid.") var scopes: [String] = []
    @Option(help: "Give up after this many seconds (default 300).") var timeout: Int = 300
    @Option(help: "browser: listen on this port of 127.0.0.1 (for a provider that registers an exact URI, or ssh -L).") var port: UInt16?
    @Option(help: "The redirect URI the provider has registered; browser: http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH to listen on.") var redirectUri: String?
    @Option(help: "password: read the password (first line) from this file descriptor instead of asking on the terminal.") var passwordFd: Int32?
    @Flag(help: "password: create the account first (Firebase accounts:signUp, Supabase signup).") var create = false

    /// Where the paste flow sends the browser unless told: nothing listens there, and the address
    /// bar then holds the answer to paste.
    static let pasteRedirect = "http://127.0.0.1/sortedvault/paste"

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout takes 1 to 3600 seconds") }
    }

    func perform() async throws {
        let settings = try providerOptions.settings()
        if flow == .password { return try await password(settings) }
        let offersDevice: Bool? = settings.kind == .oidc ? nil : settings.deviceAuthorizationEndpoint != nil
        let chosen = try Self.chosenFlow(flow, environment: ProcessInfo.processInfo.environment, offersDevice: offersDevice)
        let client = try global.sessionClient()
        // A device sign-in's CompleteLogin answers only when the provider's answer is final; it
        // waits on a connection of its own, so that CancelLogin is not queued behind it.
        let waiter = chosen == .device ? try global.sessionClient(timeout: .seconds(timeout + 30)) : nil
        let deadline = ContinuousClock.now + .seconds(timeout)
        do {
            try await InterruptWatch.cancellingOnSignal { [self] in
                switch chosen {
                case .browser, .app: try await browser(client, settings, deadline)
                case .paste: try await paste(client, settings, deadline)
                case .device: try await device(client, waiter: waiter ?? client, settings, deadline, orPaste: flow == .auto && offersDevice == nil)
                }
            }
        } catch is CancellationError where InterruptWatch.interrupted {
            StandardStreams.reportError("interrupted; the sign-in was cancelled, nothing was stored")
            throw ExitCode(InterruptWatch.exitStatus)
        }
    }

    /// The flow to run: `auto` picks by the environment (a display and no SSH: browser), then by
    /// what the provider offers (`offersDevice` nil: not known here, the daemon will tell).
    static func chosenFlow(_ choice: LoginFlow, environment: [String: String], offersDevice: Bool? = false) throws -> SignInFlow {
        switch choice {
        case .auto:
            let display = !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
            if display && (environment["SSH_CONNECTION"] ?? "").isEmpty { return .browser }
            return offersDevice == false ? .paste : .device
        case .browser: return .browser
        case .paste: return .paste
        case .device: return .device
        case .password: throw VaultError.invalidArgument("--flow password is for --kind firebase or supabase")
        }
    }

    private func request(_ settings: ProviderSettings, flow: SignInFlow, redirectURI: String) throws -> SignInRequest {
        guard let redirect = URL(string: redirectURI) else { throw VaultError.invalidArgument("--redirect-uri is not a URL") }
        return SignInRequest(service: service, account: account, settings: settings, flow: flow, redirectURI: redirect, scopes: scopes,
                             lifetime: TimeInterval(timeout))
    }

    private func begin(_ client: SessionClient, _ settings: ProviderSettings, flow: SignInFlow,
                       redirectURI: String) async throws -> SignInStart {
        let start = try await client.beginSignIn(try request(settings, flow: flow, redirectURI: redirectURI))
        Self.showURL(start)
        return start
    }

    static func showURL(_ start: SignInStart) {
        note("Open this URL in a browser to sign in:\n\n  \(start.authorizationURL.absoluteString)\n\n")
    }

    /// The browser flow, as the Swift API runs it (``BrowserSignIn``): the page is opened with
    /// xdg-open, the answer comes to a loopback listener.
    private func browser(_ client: SessionClient, _ settings: ProviderSettings, _ deadline: ContinuousClock.Instant) async throws {
        let (listenPort, path, localhost) = try listenAddress()
        let listener = try LoopbackListener(port: listenPort, path: path, localhost: localhost)
        defer { listener.close() }
        let outcome: BrowserSignIn.Outcome
        do {
            outcome = try await BrowserSignIn.run(
                try request(settings, flow: .browser, redirectURI: redirectUri ?? listener.redirectURI), through: client,
                listener: listener, timeout: ContinuousClock.now.duration(to: deadline), clock: ContinuousClock(),
                shownIn: "the terminal"
            ) { start in
                Self.showURL(start)
                // The browser gets a private page that leads to the URL, never the URL on its command line.
                do {
                    try SystemBrowser.open(start.authorizationURL)
                } catch {
                    Self.note("sortedvault: the browser was not started: \(error); open the URL above yourself\n")
                }
                Self.note("Waiting for the browser at \(listener.redirectURI) (at most \(timeout) s; Ctrl-C to stop)…\n")
            }
        } catch let error where !(error is CancellationError) {
            throw Self.signInFailure(error)
        }
        switch outcome {
        case .signedIn(let result): print("signed in: \(service) \(result.key.account)")
        case .timedOut: throw noAnswer()
        }
    }

    /// Firebase or Supabase e-mail and password: the daemon sends them to the provider and stores the answer.
    private func password(_ settings: ProviderSettings) async throws {
        guard settings.kind == .firebase || settings.kind == .supabase else {
            throw VaultError.invalidArgument("--flow password is for --kind firebase or supabase; an \(settings.kind) provider signs in with --flow browser, paste or device")
        }
        guard let email = account else {
            throw VaultError.invalidArgument("--flow password needs ACCOUNT: the e-mail address to sign in with")
        }
        let secret: SecureBytes
        if let passwordFd {
            guard fcntl(passwordFd, F_GETFD) != -1 else {
                throw VaultError.invalidArgument("--password-fd \(passwordFd): descriptor \(passwordFd) is not open; open it for the command, e.g. `\(passwordFd)< FILE`")
            }
            secret = SecretInput.firstLine(of: try SecretInput.readAll(fd: passwordFd, limit: 4096, what: "the password"))
        } else {
            guard isatty(0) == 1 || access("/dev/tty", R_OK) == 0 else {
                throw VaultError.invalidArgument("no terminal to ask for the password on: pass it on a descriptor with --password-fd N")
            }
            secret = try SecretInput.promptNoEcho("Password for \(email): ")
        }
        guard secret.count > 0 else { throw VaultError.invalidArgument("the password is empty") }
        do {
            let signedIn = try await global.sessionClient().passwordLogin(service: service, account: email, provider: settings, email: email,
                                                                         password: secret, create: create)
            print("signed in: \(service) \(signedIn)")
        } catch {
            throw Self.signInFailure(error)
        }
    }

    /// RFC 8628: the code and page go to standard error; the daemon polls while CompleteLogin
    /// waits (on `waiter`), and Ctrl-C or the timeout cancel the daemon's flow (on `client`).
    ///
    /// `orPaste`: `auto` chose the device flow without knowing that the provider offers it (oidc:
    /// the daemon reads discovery); when the daemon or the provider refuses to begin it (no device
    /// endpoint, the setting turns it off, unauthorized_client), the paste flow runs.
    private func device(_ client: SessionClient, waiter: SessionClient, _ settings: ProviderSettings,
                        _ deadline: ContinuousClock.Instant, orPaste: Bool = false) async throws {
        let start: SignInStart
        do {
            start = try await client.beginSignIn(try request(settings, flow: .device, redirectURI: Self.pasteRedirect))
        } catch let error as VaultError where orPaste && [.invalidArgument, .permissionDenied, .providerRejected].contains(error.code) {
            Self.note("sortedvault: no device sign-in (\(error.reason)); signing in by pasting instead\n")
            return try await paste(client, settings, deadline)
        }
        guard let code = start.device else { throw VaultError(.daemonFailed, "the daemon began no device sign-in") }
        var text = "\nTo sign in, open\n\n  \(code.verificationURI.absoluteString)\n\nand enter the code\n\n  \(code.userCode)\n\n"
        if let complete = code.verificationURIComplete {
            text += "(or open \(complete.absoluteString), which carries the code)\n\n"
        }
        Self.note(text + "Waiting for the sign-in to be approved (at most \(timeout) s; Ctrl-C to stop)…\n")
        let completion = Task {
            try await waiter.completeSignIn(start.flowID, callbackQuery: SecureBytes(copying: [UInt8]())).key.account
        }
        struct NoAnswerInTime: Error {}
        let account: String
        do {
            account = try await DeadlineRace.run(limit: ContinuousClock.now.duration(to: deadline), clock: ContinuousClock(),
                                                 cancelAtDeadline: false, { try await completion.value }) { .failure(NoAnswerInTime()) }
        } catch is CancellationError {
            try await end(client, start, .interrupted)
        } catch is NoAnswerInTime {
            try await end(client, start, .timedOut)
        } catch {
            throw Self.signInFailure(error)
        }
        print("signed in: \(service) \(account)")
    }

    private func paste(_ client: SessionClient, _ settings: ProviderSettings, _ deadline: ContinuousClock.Instant) async throws {
        let start = try await begin(client, settings, flow: .paste, redirectURI: redirectUri ?? Self.pasteRedirect)
        while true {
            Self.note("Sign in, then paste the address the browser ended on (it starts with \(redirectUri ?? Self.pasteRedirect)):\n")
            let line: SecureBytes
            switch try await ReadableWait.cancellable({ wake in Self.readLine(until: deadline, wake: wake) }) {
            case .failure(let why): try await end(client, start, why)
            case .success(nil): try await end(client, start, .timedOut, what: "standard input ended before an address was pasted")
            case .success(let pasted?): line = pasted
            }
            guard line.count > 0 else { continue }
            do {
                let signedIn = try await client.completeSignIn(start.flowID, callbackQuery: Self.query(of: line)).key.account
                print("signed in: \(service) \(signedIn)")
                return
            } catch let error as VaultError where error.code == .callbackMismatch {
                Self.note("sortedvault: that address is not this sign-in's answer; paste the one this sign-in ended on\n")
            } catch {
                throw Self.signInFailure(error)
            }
        }
    }

    /// Ends a wait that brought no answer: the daemon's flow is cancelled; then the cancellation
    /// (Ctrl-C: `.interrupted`) goes on, and a timeout fails with exit 8.
    private func end(_ client: SessionClient, _ start: SignInStart, _ why: ReadableWait.Result,
                     what: String? = nil) async throws -> Never {
        await client.endSignIn(start)
        if why == .interrupted { throw CancellationError() }
        throw noAnswer(what)
    }

    private func noAnswer(_ what: String? = nil) -> any Error {
        fail("sign in again: \(what ?? "no answer came within \(timeout) s"); the sign-in was cancelled, nothing was stored", .reauthRequired)
    }

    /// The port and path to listen on, from --port and --redirect-uri, and whether the URI names
    /// `localhost` (then ::1 is listened on too).
    private func listenAddress() throws -> (UInt16, String?, Bool) {
        guard let redirectUri else { return (port ?? 0, nil, false) }
        guard let components = URLComponents(string: redirectUri), components.scheme == "http",
              components.host == "127.0.0.1" || components.host == "localhost", components.fragment == nil, components.query == nil else {
            throw VaultError.invalidArgument("--redirect-uri for the browser flow must be http://127.0.0.1:PORT/PATH or http://localhost:PORT/PATH (the listener binds the loopback addresses only)")
        }
        guard let uriPort = components.port.map(UInt16.init(clamping:)) ?? port else {
            throw VaultError.invalidArgument("--redirect-uri must name its port (or give --port)")
        }
        if let port, port != uriPort { throw VaultError.invalidArgument("--port and the port of --redirect-uri differ") }
        return (uriPort, components.path.isEmpty ? "/" : components.path, components.host == "localhost")
    }

    /// A failed completion as the user should read it: declined or refused → exit 8 (sign in again).
    static func signInFailure(_ error: any Error) -> any Error {
        guard let error = error as? VaultError, error.code == .providerRejected else { return error }
        return fail("sign in again: \(error.reason)", .reauthRequired)
    }

    /// The query of a pasted address (after `?`, before `#`), or the line itself when it is a bare query.
    static func query(of line: SecureBytes) -> SecureBytes {
        line.withUnsafeBytes { raw in
            let start = raw.firstIndex(of: UInt8(ascii: "?")).map { $0 + 1 } ?? 0
            let end = raw[start...].firstIndex(of: UInt8(ascii: "#")) ?? raw.count
            var trimmedEnd = end
            while trimmedEnd > start, [0x20, 0x0D, 0x09].contains(raw[trimmedEnd - 1]) { trimmedEnd -= 1 }
            return SecureBytes(copying: UnsafeRawBufferPointer(rebasing: raw[start..<trimmedEnd]))
        }
    }

    /// One line of standard input (without its newline) into secure memory, at most 8 KiB; nil at
    /// the end of input. It blocks: run it through ``ReadableWait/cancellable(_:)``, whose `wake` ends it.
    static func readLine(until deadline: ContinuousClock.Instant, wake: Int32) -> Result<SecureBytes?, ReadableWait.Result> {
        var buffer = [UInt8](repeating: 0, count: AuthorizationCallback.maximumBytes + 1024)
        defer { buffer.withUnsafeMutableBytes { explicit_bzero($0.baseAddress!, $0.count) } }
        var count = 0
        while true {
            switch ReadableWait.wait(for: 0, wake: wake, until: deadline) {
            case .ready: break
            case let other: return .failure(other)
            }
            var byte: UInt8 = 0
            let got = read(0, &byte, 1)
            if got < 0 && errno == EINTR { continue }
            if got <= 0 { return .success(count == 0 ? nil : SecureBytes(copying: buffer[0..<count])) }
            if byte == 0x0A { return .success(SecureBytes(copying: buffer[0..<count])) }
            guard count < buffer.count else { return .success(SecureBytes(copying: buffer[0..<count])) }
            buffer[count] = byte
            count += 1
        }
    }

    /// A line for the user on standard error (the URL is not a secret: the verifier stays in the daemon).
    static func note(_ text: String) {
        Array(text.utf8).withUnsafeBytes { StandardStreams.writeAll(2, $0) }
    }
}

/// The values of `session login --flow`: ArgumentParser refuses any other, and lists these in the
/// help, the manual and the shell completions. (`app`, an app's own web view, is the Swift API's
/// alone: the CLI has none.)
enum LoginFlow: String, ExpressibleByArgument, CaseIterable {
    /// A browser when there is a display and no SSH, else the device flow (or paste).
    case auto
    case browser
    case paste
    case device
    case password
}
