import VaultCrypto
import Foundation
import Synchronization
import TestSupport
import Varlink
import Testing
import VaultClient
import VaultCore
import VaultSession
import VaultTesting

#if canImport(Glibc)
import Glibc
#endif

extension DaemonSuite {
    /// Plain http is allowed to loopback only because it never leaves the machine: a proxy named in
    /// the daemon's environment must not carry it (it would see the refresh token and client secret).
    /// The HTTP client takes no proxy from the environment at all.
    @Suite struct ProxyTests {
        /// A TCP listener on 127.0.0.1 that counts the connections it accepts and closes them.
        final class CountingListener: @unchecked Sendable {
            let port: UInt16
            private let descriptor: Int32
            private let count = Counter()

            final class Counter: Sendable {
                let value = Locked(0)
            }

            init() throws {
                let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = inet_addr("127.0.0.1")
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let bound = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                        bind(listening, pointer, length) == 0 && listen(listening, 16) == 0
                            && getsockname(listening, pointer, &length) == 0
                    }
                }
                guard bound else { throw HarnessError("cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))") }
                descriptor = listening
                port = UInt16(bigEndian: address.sin_port)
                let count = count
                Thread.detachNewThread {
                    while true {
                        let connection = accept(listening, nil, nil)
                        if connection < 0 { return }
                        count.value.withLock { $0 += 1 }
                        close(connection)
                    }
                }
            }

            var connections: Int { count.value.withLock { $0 } }
            deinit { shutdown(descriptor, Int32(SHUT_RDWR)); close(descriptor) }
        }

        /// Signs in, saves the login through a daemon started with `environment`, lets the token
        /// expire and asks again: the daemon refreshes. Returns the harness (daemon still running)
        /// and the sign-in answer.
        func refreshThroughADaemon(environment: [String: String]) async throws -> (CLIHarness, AutoLoginResult, [UInt8]) {
            let cli = try CLIHarness(extraEnvironment: environment)
            try cli.initKeyFileVault()
            try cli.writePolicy(settings: "[session]\nproactive_refresh_seconds = 0\n")
            let clock = cli.manualClock()
            let provider = try OAuthTestProvider()
            try cli.startDaemon(extraArguments: ["--unsafe-clock-file", cli.clockFile])
            let sessions = SessionClient(socketPath: cli.socket, timeout: .seconds(60))
            let key = try ItemKey(service: "com.sorted.api", account: "ada")
            let signIn = try await provider.signIn()
            guard case .object(let answer) = try JSONValue.parse(signIn) else { throw HarnessError("the sign-in answer is not a JSON object") }
            try await sessions.save(tokenResponse: answer, provider: try provider.provider(), for: key)
            clock.advance(by: 3600)
            return (cli, try await sessions.autoLogin(key), signIn)
        }

        @Test func aRefreshAgainstALoopbackProviderNeverGoesThroughTheProxy() async throws {
            let proxy = try CountingListener()
            let url = "http://127.0.0.1:\(proxy.port)"
            var environment: [String: String] = [:]
            for name in ["http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] { environment[name] = url }
            environment["no_proxy"] = "example.com"  // a list of the user's own, which must not hide loopback from the rule
            let (cli, refreshed, _) = try await refreshThroughADaemon(environment: environment)
            #expect(refreshed.outcome == "refreshed", "\(refreshed) — daemon: \(cli.daemonOutput())")
            #expect(proxy.connections == 0, "the proxy was sent \(proxy.connections) requests meant for 127.0.0.1")
            cli.stopDaemon()
        }

        /// The HTTP client writes nothing of a request to the daemon's output, whatever debug
        /// switches of other HTTP stacks (libcurl's under URLSession) the environment sets.
        @Test func theDaemonsLogHoldsNoRequestHeaderOrSecretOfARefresh() async throws {
            let (cli, refreshed, signIn) = try await refreshThroughADaemon(
                environment: ["URLSessionDebugLibcurl": "1", "URLSessionDebug": "1", "CURLOPT_VERBOSE": "1"])
            #expect(refreshed.outcome == "refreshed", "\(refreshed) — daemon: \(cli.daemonOutput())")
            cli.stopDaemon()
            guard case .object(let answer) = try JSONValue.parse(signIn), let refresh = answer["refresh_token"]?.stringValue else {
                throw HarnessError("no refresh token in the sign-in answer")
            }
            for secret in [refresh, OAuthTestProvider.clientSecret] {
                #expect(try !cli.daemonLogged(secret), "the daemon's log holds a secret of the refresh")
            }
            #expect(try !cli.daemonLogged("Authorization:"), "the daemon's log holds request headers")
        }
    }
}
