import Foundation
import BoundedJSON
import VaultCrypto
import VaultSession

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

#if canImport(Glibc)
import Glibc
#endif

/// A real OAuth2 provider for the tests: django-oauth-toolkit (`Tests/Support/oauth-provider`)
/// on 127.0.0.1, in its own state directory, started here and stopped (SIGTERM) when the test is done.
/// It has user `ada` and the confidential client `sorted-app`, rotates refresh tokens, rejects a
/// reused one, revokes (RFC 7009) and introspects (RFC 7662); `/test/…` lets a test count requests,
/// fail or hold answers.
public final class OAuthTestProvider: @unchecked Sendable {
    public static let clientID = "sorted-app"
    public static let clientSecret = "sorted-app-secret"
    public static let python = CLIHarness.repository + "/.venv/bin/python3"
    public static let script = CLIHarness.repository + "/Tests/Support/oauth-provider/provider.py"

    public let stateDirectory: String
    /// The access tokens' lifetime (`--access-token-seconds`); nil keeps the provider's hour.
    public let accessTokenSeconds: Int?
    public private(set) var port = 0
    private var process: Subprocess?

    public init(accessTokenSeconds: Int? = nil) throws {
        self.accessTokenSeconds = accessTokenSeconds
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("sv-oauth-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: stateDirectory, withIntermediateDirectories: true)
        guard FileManager.default.isExecutableFile(atPath: Self.python) else {
            throw HarnessError("no Python venv at \(Self.python): run scripts/install-deps (it installs django-oauth-toolkit)")
        }
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: stateDirectory)
    }

    /// Starts the provider (again, on the same port after the first start) and waits until it listens.
    public func start() throws {
        let portFile = stateDirectory + "/port"
        try? FileManager.default.removeItem(atPath: portFile)
        let log = open(stateDirectory + "/provider.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        let null = open("/dev/null", O_RDONLY | O_CLOEXEC)
        defer { close(log); close(null) }
        let child = try Subprocess.spawn(
            [Self.python, Self.script, "--state-dir", stateDirectory, "--port", "\(port)", "--quiet"]
                + (accessTokenSeconds.map { ["--access-token-seconds", "\($0)"] } ?? []),
            environment: ProcessInfo.processInfo.environment, stdin: null, stdout: log, stderr: log)
        process = child
        let deadline = Date().addingTimeInterval(30)
        var status: Int32 = 0
        while Date() < deadline {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8), let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) {
                port = number
                return
            }
            if child.hasExited(status: &status) {
                process = nil
                throw HarnessError("the OAuth2 provider exited with \(status): \(logText())")
            }
            usleep(20_000)
        }
        throw HarnessError("the OAuth2 provider did not start in 30 s: \(logText())")
    }

    /// Stops the provider: "the provider is down".
    public func stop() {
        guard let process else { return }
        process.signal(SIGTERM)
        process.wait()
        self.process = nil
    }

    public func logText() -> String { (try? String(contentsOfFile: stateDirectory + "/provider.log", encoding: .utf8)) ?? "" }

    public var base: String { "http://127.0.0.1:\(port)" }
    public var tokenEndpoint: URL { URL(string: base + "/o/token/")! }
    public var revocationEndpoint: URL { URL(string: base + "/o/revoke_token/")! }

    /// The provider settings a client app saves with its login.
    public func provider(authentication: OAuthProvider.ClientAuthentication = .basic, revocation: Bool = true) throws -> OAuthProvider {
        try OAuthProvider(tokenEndpoint: tokenEndpoint, revocationEndpoint: revocation ? revocationEndpoint : nil,
                          clientID: Self.clientID, clientSecret: SecureBytes(copying: Array(Self.clientSecret.utf8)),
                          clientAuthentication: authentication)
    }

    // MARK: Talking to it as a test

    /// Signs ada in with the password grant: the token response JSON a client app would get.
    public func signIn() async throws -> [UInt8] {
        let (status, body) = try await post("/o/token/", form: [
            "grant_type": "password", "username": "ada", "password": "correct horse battery", "scope": "read write",
        ])
        guard status == 200 else { throw HarnessError("password grant failed with HTTP \(status)") }
        return body
    }

    /// Whether the provider's introspection (RFC 7662) says the token is active.
    public func isActive(_ token: String) async throws -> Bool {
        let (status, body) = try await post("/o/introspect/", form: ["token": token])
        guard status == 200, case .object(let object) = try JSONValue.parse(body) else {
            throw HarnessError("introspection failed with HTTP \(status)")
        }
        return object["active"]?.boolValue ?? false
    }

    /// Tries a refresh token directly: the provider's HTTP status and `error`.
    public func tryRefresh(_ refreshToken: String) async throws -> (Int, String?) {
        let (status, body) = try await post("/o/token/", form: ["grant_type": "refresh_token", "refresh_token": refreshToken])
        return (status, (try? JSONValue.parse(body))?.objectValue?["error"]?.stringValue)
    }

    /// How many refresh_token grants the provider has received.
    public func refreshRequests() async throws -> Int {
        Int(try await stats()["token_requests"]?.objectValue?["refresh_token"]?.intValue ?? -1)
    }

    public func revocationRequests() async throws -> Int {
        Int(try await stats()["revocations"]?.intValue ?? -1)
    }

    /// Refresh answers by HTTP status.
    public func refreshResponses(_ status: Int) async throws -> Int {
        Int(try await stats()["refresh_responses"]?.objectValue?["\(status)"]?.intValue ?? 0)
    }

    public func stats() async throws -> [String: JSONValue] {
        let (data, _) = try await URLSession.shared.data(from: URL(string: base + "/test/stats")!)
        guard case .object(let object) = try JSONValue.parse(Array(data)) else { throw HarnessError("bad stats") }
        return object
    }

    /// `/test/revoke-all`, `/test/delay`, `/test/fail`.
    public func control(_ path: String, _ body: [String: JSONValue] = [:]) async throws {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        request.httpBody = Data(JSONValue.object(body).serialized())
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let (_, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw HarnessError("\(path) failed") }
    }

    /// A form POST authenticated as the client (by default `sorted-app`) with HTTP Basic.
    public func post(_ path: String, form: [String: String],
                     client: (id: String, secret: String) = (clientID, clientSecret)) async throws -> (Int, [UInt8]) {
        var request = URLRequest(url: URL(string: base + path)!)
        request.httpMethod = "POST"
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._*")
        request.httpBody = Data(form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed)!)" }
            .joined(separator: "&").utf8)
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        let credentials = Data("\(client.id):\(client.secret)".utf8).base64EncodedString()
        request.setValue("Basic \(credentials)", forHTTPHeaderField: "Authorization")
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, Array(data))
    }
}

extension Array where Element == UInt8 {
    /// A string field of a JSON object (test helper for token responses).
    public func jsonField(_ name: String) -> String? {
        (try? JSONValue.parse(self))?.objectValue?[name]?.stringValue
    }
}
